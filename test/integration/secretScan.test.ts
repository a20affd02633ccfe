/** The secret scan every end-to-end run ends with finds what it looks for. */
import { BlobServiceClient } from '@azure/storage-blob';
import { startAzurite, type RunningAzurite } from '../../tools/embeddedAzurite';
import { canaryPrefix, scanForSecrets } from '../../tools/harness/secretScan';

let azurite: RunningAzurite;
beforeAll(async () => {
  azurite = await startAzurite();
  const service = BlobServiceClient.fromConnectionString(azurite.connectionString);
  for (const [container, text] of [
    ['gateway-orchestrations', `{"input":{"secureValue":"${canaryPrefix}abc"}}`],
    ['gateway-certificate-secrets', 'issued-secret-value'],
    ['clean', '{}'],
  ]) {
    const client = service.getContainerClient(container!);
    await client.create();
    await client.getBlockBlobClient('doc.json').upload(text!, text!.length);
  }
});
afterAll(async () => {
  await azurite.close();
});

it('reports canaries and known secrets in output and blobs, outside the allowed container only', async () => {
  const findings = await scanForSecrets({
    lines: ['ok', 'Bearer the-upstream-token leaked', 'fine'],
    connectionString: azurite.connectionString,
    secrets: ['the-upstream-token', 'issued-secret-value'],
    allowedContainers: ['gateway-certificate-secrets'],
  });
  expect(findings).toEqual([
    { where: 'output line 2', secret: 'the-…' },
    { where: 'gateway-orchestrations/doc.json', secret: `${canaryPrefix}abc` },
  ]);
});
