/** The app's own routes, declared once: path, method, auth level, access class and description. */
export { actionOf, appRoutes, registrationOf } from './appRoutes';
export type { AppRoute } from './appRoutes';
export { approvalDecisionBody } from './approvalRoutes';
