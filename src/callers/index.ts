/** Who calls: one identity however the call came (a function key, an App Service Authentication principal, a chat platform's user). */
export { callerLogFields, callerOf, chatCallerOf } from './callerIdentity';
export type { CallerIdentity } from './callerIdentity';
