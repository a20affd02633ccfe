/**
 * The gateway's TLS and cipher custom properties. A PATCH that omits any of these
 * keys resets it to its default, so a caller should always send the complete set: this module
 * builds that set from a short description, refuses to disable what the platform requires,
 * and checks a service resource's `customProperties`.
 */
import { z } from 'zod';
import { DeclarationErrors, type DeclarationError } from './declarationValidation';

/** Protocol keys: `True` leaves the protocol enabled, `False` disables it. */
const protocolSuffixes = {
  tls10: '.Security.Protocols.Tls10',
  tls11: '.Security.Protocols.Tls11',
  ssl30: '.Security.Protocols.Ssl30',
} as const;
const backendSuffixes = {
  tls10: '.Security.Backend.Protocols.Tls10',
  tls11: '.Security.Backend.Protocols.Tls11',
  ssl30: '.Security.Backend.Protocols.Ssl30',
} as const;
const tripleDesSuffix = '.Security.Ciphers.TripleDes168';
const http2Suffix = '.Protocols.Server.Http2';

/** Ciphers that may be set to false (default true). */
export const configurableCiphers = [
  'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
  'TLS_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_RSA_WITH_AES_256_CBC_SHA256',
  'TLS_RSA_WITH_AES_128_CBC_SHA256',
  'TLS_RSA_WITH_AES_256_CBC_SHA',
  'TLS_RSA_WITH_AES_128_CBC_SHA',
] as const;

/** Ciphers the platform requires: they cannot be disabled. */
export const requiredCiphers = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
] as const;

const protocolSet = z.strictObject({ tls10: z.boolean().optional(), tls11: z.boolean().optional(), ssl30: z.boolean().optional() });

export const gatewaySettingsRequest = z.strictObject({
  /** Defaults differ: True for services created on or before 2018-04-01, False afterwards. */
  serviceCreatedOnOrBefore20180401: z.boolean().default(false),
  clientProtocols: protocolSet.optional(),
  backendProtocols: protocolSet.optional(),
  tripleDes168: z.boolean().optional(),
  http2: z.boolean().optional(),
  /** Cipher name to enabled; only configurable ciphers may be false. */
  ciphers: z.record(z.string(), z.boolean()).optional(),
});
export type GatewaySettingsRequest = z.input<typeof gatewaySettingsRequest>;

const flag = (value: boolean) => (value ? 'True' : 'False');

/** Every key, in a stable order, with its suffix and default. */
function allKeys(prefix: string, legacyDefaults: boolean): { key: string; defaultValue: boolean }[] {
  return [
    ...Object.values(protocolSuffixes).map((suffix) => ({ key: `${prefix}${suffix}`, defaultValue: legacyDefaults })),
    ...Object.values(backendSuffixes).map((suffix) => ({ key: `${prefix}${suffix}`, defaultValue: legacyDefaults })),
    { key: `${prefix}${tripleDesSuffix}`, defaultValue: legacyDefaults },
    { key: `${prefix}${http2Suffix}`, defaultValue: false },
    ...configurableCiphers.map((cipher) => ({ key: `${prefix}.Security.Ciphers.${cipher}`, defaultValue: true })),
  ];
}

export type BuildResult = { ok: true; customProperties: Record<string, string> } | { ok: false; errors: DeclarationError[] };

/** The complete set of keys for the wanted settings; unspecified ones take their defaults. */
export function buildCustomProperties(request: z.output<typeof gatewaySettingsRequest>, prefix: string): BuildResult {
  const errors: DeclarationError[] = [];
  const chosen = new Map<string, boolean>();
  for (const [name, value] of Object.entries(request.clientProtocols ?? {}))
    chosen.set(`${prefix}${protocolSuffixes[name as keyof typeof protocolSuffixes]}`, value);
  for (const [name, value] of Object.entries(request.backendProtocols ?? {}))
    chosen.set(`${prefix}${backendSuffixes[name as keyof typeof backendSuffixes]}`, value);
  if (request.tripleDes168 !== undefined) chosen.set(`${prefix}${tripleDesSuffix}`, request.tripleDes168);
  if (request.http2 !== undefined) chosen.set(`${prefix}${http2Suffix}`, request.http2);
  for (const [cipher, enabled] of Object.entries(request.ciphers ?? {})) {
    const path = `ciphers.${cipher}`;
    if ((requiredCiphers as readonly string[]).includes(cipher)) {
      if (!enabled) errors.push({ path, code: 'CipherRequired', message: `${cipher} is required by the platform and cannot be disabled.` });
    } else if ((configurableCiphers as readonly string[]).includes(cipher)) {
      chosen.set(`${prefix}.Security.Ciphers.${cipher}`, enabled);
    } else {
      errors.push({ path, code: 'UnknownCipher', message: `${cipher} is not a cipher the gateway configures.` });
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const customProperties = Object.fromEntries(
    allKeys(prefix, request.serviceCreatedOnOrBefore20180401).map(({ key, defaultValue }) => [key, flag(chosen.get(key) ?? defaultValue)]),
  );
  return { ok: true, customProperties };
}

/**
 * Checks a service resource's (or a bare) `customProperties`: gateway keys must be known and
 * hold True or False. Missing keys are warnings: harmless in an answer, but a PATCH sending
 * this set back would reset them to their defaults.
 */
export function validateCustomProperties(body: unknown, prefix: string): { errors: DeclarationErrors; warnings: DeclarationError[] } {
  const fromResource = (body as { properties?: { customProperties?: unknown } } | null)?.properties?.customProperties;
  const inRoot = (body as { customProperties?: unknown } | null)?.customProperties;
  const basePath = fromResource !== undefined ? 'properties.customProperties' : inRoot !== undefined ? 'customProperties' : '';
  const properties = (fromResource ?? inRoot ?? body) as unknown;
  const errors = new DeclarationErrors();
  if (!properties || typeof properties !== 'object' || Array.isArray(properties)) {
    errors.add({ path: basePath || '$', code: 'InvalidType', message: 'customProperties must be an object of key to "True" or "False".' });
    return { errors, warnings: [] };
  }
  const known = new Set(allKeys(prefix, false).map(({ key }) => key.toLowerCase()));
  const pathOf = (key: string) => (basePath ? `${basePath}['${key}']` : `['${key}']`);
  for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
    if (!key.toLowerCase().startsWith(prefix.toLowerCase())) continue;
    const cipher = /\.Security\.Ciphers\.(\w+)$/.exec(key)?.[1];
    if (cipher && (requiredCiphers as readonly string[]).includes(cipher)) {
      if (String(value).toLowerCase() === 'false') errors.add({ path: pathOf(key), code: 'CipherRequired', message: `${cipher} cannot be disabled.` });
      continue;
    }
    if (!known.has(key.toLowerCase())) errors.add({ path: pathOf(key), code: 'UnknownKey', message: `${key} is not a gateway setting.` });
    else if (typeof value !== 'string' || !/^(true|false)$/i.test(value))
      errors.add({ path: pathOf(key), code: 'InvalidValue', message: `${key} must be "True" or "False".` });
  }
  const present = new Set(Object.keys(properties).map((key) => key.toLowerCase()));
  const warnings = allKeys(prefix, false)
    .filter(({ key }) => !present.has(key.toLowerCase()))
    .map(({ key }) => ({ path: pathOf(key), code: 'MissingKey', message: `${key} is absent: a PATCH without it resets it to its default.` }));
  return { errors, warnings };
}
