/** The gateway custom properties: the complete set built from a short description, and checks. */
import { buildCustomProperties, configurableCiphers, gatewaySettingsRequest, validateCustomProperties } from '../../../src/templates/gatewayProperties';
import { loadConformanceExamples } from '../../helpers/conformance';

const prefix = 'Vendor.WindowsAzure.ApiManagement.Gateway';
const build = (request: unknown) => buildCustomProperties(gatewaySettingsRequest.parse(request), prefix);

describe('buildCustomProperties', () => {
  it('gives every key, the wanted ones set and the rest at the defaults of a new service', () => {
    const result = build({ clientProtocols: { tls11: true }, http2: true, ciphers: { TLS_RSA_WITH_AES_128_CBC_SHA: false } });
    expect(result.ok).toBe(true);
    const properties = (result as { customProperties: Record<string, string> }).customProperties;
    expect(Object.keys(properties)).toHaveLength(8 + configurableCiphers.length);
    expect(properties).toMatchObject({
      [`${prefix}.Security.Protocols.Tls10`]: 'False',
      [`${prefix}.Security.Protocols.Tls11`]: 'True',
      [`${prefix}.Security.Backend.Protocols.Ssl30`]: 'False',
      [`${prefix}.Security.Ciphers.TripleDes168`]: 'False',
      [`${prefix}.Protocols.Server.Http2`]: 'True',
      [`${prefix}.Security.Ciphers.TLS_RSA_WITH_AES_128_CBC_SHA`]: 'False',
      [`${prefix}.Security.Ciphers.TLS_RSA_WITH_AES_256_CBC_SHA`]: 'True',
    });
  });

  it('uses True defaults for a service created on or before 2018-04-01, but never for Http2', () => {
    const properties = (build({ serviceCreatedOnOrBefore20180401: true }) as { customProperties: Record<string, string> }).customProperties;
    expect(properties[`${prefix}.Security.Protocols.Ssl30`]).toBe('True');
    expect(properties[`${prefix}.Protocols.Server.Http2`]).toBe('False');
  });

  it('refuses to disable a cipher the platform requires, and names unknown ones', () => {
    expect(build({ ciphers: { TLS_AES_256_GCM_SHA384: false, TLS_NULL_WITH_NULL_NULL: false } })).toEqual({
      ok: false,
      errors: [
        expect.objectContaining({ path: 'ciphers.TLS_AES_256_GCM_SHA384', code: 'CipherRequired' }),
        expect.objectContaining({ path: 'ciphers.TLS_NULL_WITH_NULL_NULL', code: 'UnknownCipher' }),
      ],
    });
  });
});

describe('validateCustomProperties', () => {
  it('finds the migration example valid, warning of the keys a PATCH would reset', () => {
    const example = loadConformanceExamples().find((candidate) => candidate.operationId === 'ApiManagementService_MigrateToStv2')!;
    // The example keeps the real prefix: its keys are field names, not provider namespaces.
    const result = validateCustomProperties(example.responses['200']!.body, 'Microsoft.WindowsAzure.ApiManagement.Gateway');
    expect(result.errors.listed).toEqual([]);
    expect(result.warnings.map((warning) => warning.code)).toEqual(Array(1 + configurableCiphers.length).fill('MissingKey'));
  });

  it('reports unknown keys, bad values and disabled required ciphers', () => {
    const result = validateCustomProperties(
      {
        customProperties: {
          [`${prefix}.Security.Protocols.Tls13`]: 'True',
          [`${prefix}.Security.Protocols.Tls10`]: 'maybe',
          [`${prefix}.Security.Ciphers.TLS_AES_128_GCM_SHA256`]: 'false',
          'Other.Setting': 'x',
        },
      },
      prefix,
    );
    expect(result.errors.listed.map((error) => [error.path, error.code])).toEqual([
      [`customProperties['${prefix}.Security.Protocols.Tls13']`, 'UnknownKey'],
      [`customProperties['${prefix}.Security.Protocols.Tls10']`, 'InvalidValue'],
      [`customProperties['${prefix}.Security.Ciphers.TLS_AES_128_GCM_SHA256']`, 'CipherRequired'],
    ]);
  });
});
