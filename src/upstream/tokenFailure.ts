/**
 * What the log says when the app's own token cannot be had (`UPSTREAM_AUTH=managed`): the
 * cause the credential gave (its first line, without tokens or query strings) and the settings
 * that decide where the token comes from, so an operator knows where to look.
 */
import type { Config } from '../settings';
import { sanitizeText } from '../rules';
import type { UpstreamName } from './tokenSource';

const maxCauseLength = 600;

/**
 * What the credential said: the error under the app's own wrapper, whose message names each
 * credential it tried (DefaultAzureCredential lists them one a line), on one line.
 */
function causeOf(error: unknown): string {
  const credentialError = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const message = credentialError instanceof Error ? credentialError.message : String(credentialError);
  const oneLine = message.replace(/\s+/g, ' ').trim().replace(/\.+$/, '') || 'no reason given';
  const clean = sanitizeText(oneLine);
  return clean.length > maxCauseLength ? `${clean.slice(0, maxCauseLength)}…` : clean;
}

function whereToLook(upstream: UpstreamName, config: Config): string {
  if (upstream === 'lifecycle' && config.LIFECYCLE_USERNAME) {
    return `LIFECYCLE_TENANT_ID, LIFECYCLE_CLIENT_ID, LIFECYCLE_USERNAME and LIFECYCLE_PASSWORD (the lifecycle user), and LIFECYCLE_TOKEN_SCOPE (now ${config.lifecycleTokenScope})`;
  }
  const scope =
    upstream === 'management' ? `MANAGEMENT_TOKEN_SCOPE (now ${config.managementTokenScope})` : `LIFECYCLE_TOKEN_SCOPE (now ${config.lifecycleTokenScope})`;
  return (
    `the app's managed identity (AZURE_CLIENT_ID names a user-assigned one; locally, az login or AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET), ` +
    `${scope}, or UPSTREAM_AUTH (now ${config.UPSTREAM_AUTH}; static or passthrough need no identity)`
  );
}

/** One line for the log: which token, why not, and which settings to look at. */
export function tokenFailureMessage(error: unknown, upstream: UpstreamName, config: Config): string {
  return `No token could be obtained for the ${upstream} upstream: ${causeOf(error)}. Look at ${whereToLook(upstream, config)}.`;
}
