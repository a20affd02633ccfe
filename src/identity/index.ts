/** The app's credentials, built on first use, each token request within TOKEN_TIMEOUT_MS. */
export { credentialOnFirstUse, managedIdentityOnFirstUse, tokenWaits } from './credentialOnFirstUse';
