/** The rules every layer shares: what is secret, what a scope is, JSON bodies and their depth, correlation ids, the app's query parameters, validation details, cross-site requests. */
export { appParameterOf, isAppQueryParameter } from './appParameters';
export { correlationHeader, correlationIdOf } from './correlation';
export { crossSiteReasonOf } from './crossSite';
export { errorCodeOf, ownErrorCode } from './errorCodes';
export type { WithOwnErrorCode } from './errorCodes';
export { parseJsonBody } from './jsonBody';
export type { ParsedBody } from './jsonBody';
export { nestingDepth } from './nestingDepth';
export { failureForLog, redactSecrets, redactedMarker, sanitizeText } from './redaction';
export { assertScopeAllowed, isScopeAllowed, ordinalUpper } from './scopeGuard';
export { ProblemList, detailsFromParameterIssues, invalidRequest, jsonPathOf } from './validationDetails';
