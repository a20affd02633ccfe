/** The operator console's files and its session route. */
export { consoleAssetResponse, consolePageResponse, withConsoleHeaders } from './consoleFiles';
export { consoleSession } from './consoleSession';
