/** Blob storage: the client and its sign-in, the time budget, and the primitives every store uses (records under ETag conditions, containers made once, expiring records, the outage latch). */
export { downloadText, statusCodeOf } from './blobText';
export { containerMadeOnce } from './containerMadeOnce';
export { OnceMarkers, allExpiring } from './onceMarkers';
export type { Expiring } from './onceMarkers';
export { OutageLatch } from './outageLatch';
export { RecordStore, jsonFormat, markerFormat, updateConditionally } from './recordStore';
export type { RecordCalls, RecordFormat, StoredRecord } from './recordStore';
export { StorageBudget, withStorageAttempts } from './storageBudget';
export { blobServiceOf } from './storageTarget';
export { UseCounters } from './useCounters';
export type { SeenCount } from './useCounters';
