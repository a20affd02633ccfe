/**
 * `npm start -- --useHttps [--cert --password] [--port]`, as Core Tools' `func start --useHttps`:
 * the app over HTTPS with a generated certificate kept for the next start, or a given .pfx;
 * links on https; bad options stop start-up naming the option and never the password.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { Agent, request } from 'undici';
import { runAppExpectingFailure, startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { printedPem, printedPemPath, trustingAgent } from '../helpers/httpsTrust';
import { newPfx } from '../helpers/pfxFile';

const subscription = '00000000-0000-0000-0000-000000000000';
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
const groupPath = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/tls?api-version=2025-09-01`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });

/** The certificate a TLS server presents, identified without trusting it. */
async function presentedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('with the generated certificate', () => {
  let gateway: GatewayFixture;
  let agent: Agent;
  beforeAll(async () => {
    gateway = await startGateway({}, { listItems: 5, pageSize: 2 }, { args: ['--useHttps'] });
    agent = trustingAgent(printedPem(gateway.app));
  });
  afterAll(async () => {
    await agent.close();
    await gateway.stop();
  });

  it('serves on https://127.0.0.1:$PORT/api and says where its PEM is and how to trust it', () => {
    expect(gateway.app.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(printedPemPath(gateway.app)).toBe(join(gateway.app.cwd, '.local-https', 'localhost.pem'));
    const output = gateway.app.lines.join('\n');
    expect(output).toMatch(
      /self-signed certificate for localhost and 127\.0\.0\.1 \(generated now, valid until \d{4}-\d\d-\d\d; a start within a day of that makes a new one/,
    );
    for (const variable of ['NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE']) expect(output).toContain(variable);
  });

  it('hands out links on https, on the host the caller addressed', async () => {
    const port = new URL(gateway.app.url).port;
    for (const origin of [`https://127.0.0.1:${port}`, `https://localhost:${port}`]) {
      const first = await request(`${origin}/api/${usagesPath}`, { dispatcher: agent });
      const page = (await first.body.json()) as { nextLink: string };
      expect(page.nextLink).toMatch(new RegExp(`^${origin}/api/subscriptions/`));
      const second = await request(page.nextLink, { dispatcher: agent });
      expect(((await second.body.json()) as { value: { id: string }[] }).value.map((usage) => usage.id)).toEqual(['usage-2', 'usage-3']);
    }
    const started = await request(gateway.api(groupPath), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: groupBody,
      dispatcher: agent,
    });
    await started.body.dump();
    const id = started.headers['x-orchestration-id'] as string;
    expect(started.headers.location).toBe(`${gateway.app.url}/api/operations/${id}`);
    expect(started.headers.link).toContain(`<${gateway.app.url}/api/orchestrations/${id}>; rel="status"`);
  });

  it('is refused by a client that does not trust the certificate', async () => {
    await expect(request(gateway.api(usagesPath))).rejects.toThrow(/self-signed certificate/);
  });

  it('keeps the certificate for the next start in the same folder', async () => {
    let again: AppProcess | undefined;
    try {
      again = await startApp(gateway.env, { args: ['--useHttps'], cwd: gateway.app.cwd });
      expect(again.lines.join('\n')).toMatch(/kept from an earlier start/);
      expect(await presentedFingerprint(again.url)).toBe(await presentedFingerprint(gateway.app.url));
    } finally {
      await again?.stop();
    }
  });
});

describe('with --cert and --password', () => {
  const password = 'CANARY-SECRET-pfx-password';
  let folder: string;
  let pfxPath: string;
  let fingerprint: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'pfx-'));
    pfxPath = join(folder, 'app.pfx');
    const made = newPfx(password);
    writeFileSync(pfxPath, made.pfx);
    writeFileSync(join(folder, 'password.txt'), `${password}\n`);
    writeFileSync(join(folder, 'no-key.pfx'), newPfx(password, { withoutKey: true }).pfx);
    writeFileSync(join(folder, 'expired.pfx'), newPfx(password, { madeAt: new Date(Date.now() - 400 * 24 * 3600_000) }).pfx);
    fingerprint = made.fingerprint256;
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('serves with that certificate, the password read from a file, and prints no password', async () => {
    const gateway = await startGateway({}, {}, { args: ['--useHttps', '--cert', pfxPath, '--password', join(folder, 'password.txt')] });
    try {
      expect(gateway.app.url).toMatch(/^https:/);
      expect(await presentedFingerprint(gateway.app.url)).toBe(fingerprint);
      expect(gateway.app.lines.join('\n')).toContain(`HTTPS with the certificate of ${pfxPath}`);
      expect(existsSync(join(gateway.app.cwd, '.local-https'))).toBe(false);
    } finally {
      await gateway.stop(); // searches the output for the password (a canary)
    }
  });

  it('serves with a .pfx encrypted with RC2 and 3DES, which OpenSSL 3 refuses without its legacy provider', async () => {
    const fixtures = join(__dirname, '..', 'fixtures', 'certificates');
    writeFileSync(join(folder, 'fixture-password.txt'), 'pässwörd-€-fixture\n');
    const gateway = await startGateway(
      {},
      {},
      { args: ['--useHttps', '--cert', join(fixtures, 'legacy-3des-rc2.pfx'), '--password', join(folder, 'fixture-password.txt')] },
    );
    try {
      expect(await presentedFingerprint(gateway.app.url)).toBe(new X509Certificate(readFileSync(join(fixtures, 'certificate.cer'))).fingerprint256);
    } finally {
      await gateway.stop();
    }
  });

  it.each([
    [
      'a .pfx that does not open with the password',
      ['--useHttps', '--cert', '{pfx}', '--password', 'CANARY-SECRET-wrong'],
      /--cert \S+app\.pfx does not open with the --password given/,
    ],
    ['--cert without --password', ['--useHttps', '--cert', '{pfx}'], /--cert needs --password/],
    [
      'a .pfx without its private key',
      ['--useHttps', '--cert', '{folder}/no-key.pfx', '--password', '{folder}/password.txt'],
      /--cert \S+no-key\.pfx opens with the --password given but holds no private key/,
    ],
    ['an expired certificate', ['--useHttps', '--cert', '{folder}/expired.pfx', '--password', '{folder}/password.txt'], /--cert \S+expired\.pfx expired on /],
    ['an unknown option', ['--useHttps', '--pasword', 'CANARY-SECRET-typo'], /Unknown option --pasword/],
  ])('stops start-up for %s, naming the option', async (_title, args, message) => {
    const { code, output } = await runAppExpectingFailure({}, { args: args.map((arg) => arg.replace('{pfx}', pfxPath).replace('{folder}', folder)) });
    expect(code).toBe(1);
    expect(output).toMatch(message);
    expect(output).not.toContain('CANARY-SECRET');
  });
});

describe('--port', () => {
  it('serves on the port given, over PORT', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const gateway = await startGateway({ PORT: '0' }, {}, { args: ['--port', String(port)] });
    try {
      expect(gateway.app.url).toBe(`http://127.0.0.1:${port}`);
      expect((await request(gateway.api('health'))).statusCode).toBe(200);
    } finally {
      await gateway.stop();
    }
  });
});
