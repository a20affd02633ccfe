/** The upstream client: undici, retries only where safe, Retry-After, pages, the URL guard, tokens and the budget the management service reports. */
export { collectPagesText, isListPage, listPageText, rewriteNextLink } from './paging';
export type { FetchedPage, ListPage } from './paging';
export { parseRetryAfterMs } from './retryAfter';
export { defaultRetryPolicy } from './retryStrategy';
export { identifierClaim, unverifiedClaimsOf } from './tokenClaims';
export { tokenFailureMessage } from './tokenFailure';
export { actorOf, bearerTokenOf, credentialTokenSource, passthroughTokenSource, staticTokenSource } from './tokenSource';
export type { TokenSource, UpstreamName } from './tokenSource';
export { UpstreamBudget, remainingBudgetOf } from './upstreamBudget';
export type { RemainingBudget } from './upstreamBudget';
export { UpstreamClient, createUpstreamAgent, refuseRedirect } from './upstreamClient';
export type { UpstreamClientOptions, UpstreamResponse } from './upstreamClient';
export { parseUpstreamJson } from './upstreamJson';
export { isTrustedUrl } from './urlGuard';
