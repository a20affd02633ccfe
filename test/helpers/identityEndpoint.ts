/**
 * A stand-in for the managed identity endpoint of App Service and Functions on 127.0.0.1: the
 * platform sets IDENTITY_ENDPOINT and IDENTITY_HEADER, and @azure/identity (through MSAL) asks
 * `GET <endpoint>?resource=...&api-version=2019-08-01[&client_id=...]` with the header
 * `X-IDENTITY-HEADER`. It answers only that header, with the token `tokenFor` gives the resource,
 * and records every ask.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface IdentityAsk {
  path: string;
  resource: string | null;
  clientId: string | null;
  header: string | undefined;
}

export interface IdentityEndpoint {
  /** The settings the platform sets: IDENTITY_ENDPOINT and IDENTITY_HEADER. */
  env: { IDENTITY_ENDPOINT: string; IDENTITY_HEADER: string };
  asked: IdentityAsk[];
  close(): Promise<void>;
}

const identityHeader = 'identity-header-of-this-test';

export async function startIdentityEndpoint(tokenFor: (resource: string) => string): Promise<IdentityEndpoint> {
  const asked: IdentityAsk[] = [];
  const server = createServer((incoming: IncomingMessage, response) => {
    const url = new URL(incoming.url ?? '/', 'http://127.0.0.1');
    const header = incoming.headers['x-identity-header'] as string | undefined;
    asked.push({ path: url.pathname, resource: url.searchParams.get('resource'), clientId: url.searchParams.get('client_id'), header });
    const resource = url.searchParams.get('resource');
    if (header !== identityHeader || !resource) {
      response.writeHead(401).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ access_token: tokenFor(resource), expires_on: String(Math.floor(Date.now() / 1000) + 3600), resource, token_type: 'Bearer' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    env: { IDENTITY_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}/msi/token`, IDENTITY_HEADER: identityHeader },
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const base64Url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * An access token for storage as Entra ID issues one, in the form Azurite's OAuth mode checks:
 * a JWT with its lifetime, an Entra issuer and the storage audience (Azurite does not check the
 * signature, so this one has a made-up one).
 */
export function storageAccessToken(now = Date.now()): string {
  const seconds = Math.floor(now / 1000);
  const claims = {
    aud: 'https://storage.azure.com',
    iss: 'https://sts.windows.net/00000000-0000-0000-0000-0000000000aa/',
    iat: seconds - 60,
    nbf: seconds - 60,
    exp: seconds + 3600,
    oid: '00000000-0000-0000-0000-0000000000bb',
  };
  return `${base64Url({ alg: 'RS256', typ: 'JWT' })}.${base64Url(claims)}.${Buffer.from('not-a-signature').toString('base64url')}`;
}
