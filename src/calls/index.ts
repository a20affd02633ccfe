/** What a call does, whatever way it came: the one pipeline of a documented operation, the orchestration routes' work (read, wait, restart, bulk actions, counts), the answers and the call record. */
export { errorResponse, jsonResponse } from './answers';
export { grantFor, notAllowed, refusalCodes, visibleFilter } from './authorization';
export { bulkAction } from './bulkActions';
export { callRecordLine } from './callLog';
export type { CallRecordDraft } from './callLog';
export { longestWaitSeconds, takeWaitSlot, waitForEnd } from './gatewayWait';
export { notifyHeader } from './notifyTarget';
export { forwardedCallerHeaders, runOperation } from './operationCall';
export type { OperationCall, OperationResult } from './operationCall';
export { operationAnswer, statusDocumentResponse } from './orchestrationAnswers';
export { orchestrationCounts } from './orchestrationCounts';
export { continuationHeader, listRequestOf, purgeRequestOf, scanBoundsOf, waitSecondsOf } from './orchestrationQueries';
export { visibleOrchestration, visibleStatus } from './orchestrationVisibility';
export type { Viewer } from './orchestrationVisibility';
export { callerReaderOf } from './pollReader';
export { restartOrchestration } from './restart';
export type { RouteCall } from './routeCall';
export { onHeldStart } from './startOrHold';
