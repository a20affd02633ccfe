/** The operation catalogue: each documented operation once, with its schemas. */
export { fillPath, operations, pathParamsOf, resolvePathTemplate } from './catalogue';
export type { HttpMethod, OperationSpec, UpstreamName } from './catalogue';
export { certificateDownloadResponse, environmentId, projectId } from './lifecycle';
