/** API management: the gateway-management service resource and its migration. */
import { z } from 'zod';
import { identityType, resourceEnvelope, systemData } from './common';

export const serviceName = z
  .string()
  .min(1, 'serviceName must be 1 to 50 characters')
  .max(50, 'serviceName must be 1 to 50 characters')
  .regex(/^[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/, 'serviceName must match ^[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$');

/** Body of migrateToStv2; absent, the service applies `PreserveIp`, as the service documents. */
export const migrateToStv2Request = z.looseObject({ mode: z.enum(['PreserveIp', 'NewIP']).optional() });

const skuName = z.enum(['Developer', 'Standard', 'Premium', 'Basic', 'Consumption', 'Isolated', 'BasicV2', 'StandardV2']);
const sku = z.looseObject({ name: skuName, capacity: z.number().int() });
const enabledDisabled = z.enum(['Enabled', 'Disabled']);
const platformVersion = z.enum(['undetermined', 'stv1', 'stv2', 'mtv1', 'stv2.1']);

const virtualNetworkConfiguration = z.looseObject({
  subnetResourceId: z.string().optional(),
  subnetname: z.string().optional(),
  vnetid: z.string().optional(),
});

const certificateInformation = z.looseObject({ expiry: z.string(), subject: z.string(), thumbprint: z.string() });

const hostnameConfiguration = z.looseObject({
  type: z.enum(['Proxy', 'Portal', 'Management', 'Scm', 'DeveloperPortal', 'ConfigurationApi']),
  hostName: z.string(),
  certificateSource: z.enum(['Managed', 'KeyVault', 'Custom', 'BuiltIn']).optional(),
  certificateStatus: z.enum(['Completed', 'Failed', 'InProgress']).optional(),
  certificate: certificateInformation.optional(),
  encodedCertificate: z.string().optional(),
  certificatePassword: z.string().optional(),
  keyVaultId: z.string().optional(),
  identityClientId: z.string().optional(),
  defaultSslBinding: z.boolean().optional(),
  negotiateClientCertificate: z.boolean().optional(),
});

const additionalLocation = z.looseObject({
  location: z.string(),
  sku,
  zones: z.array(z.string()).optional(),
  publicIPAddresses: z.array(z.string()).nullish(),
  privateIPAddresses: z.array(z.string()).nullish(),
  outboundPublicIPAddresses: z.array(z.string()).nullish(),
  publicIpAddressId: z.string().nullish(),
  virtualNetworkConfiguration: virtualNetworkConfiguration.nullish(),
  gatewayRegionalUrl: z.string().optional(),
  disableGateway: z.boolean().optional(),
  natGatewayState: enabledDisabled.optional(),
  platformVersion: platformVersion.optional(),
});

export const apiManagementServiceResource = z.looseObject({
  ...resourceEnvelope,
  location: z.string().optional(),
  etag: z.string().optional(),
  tags: z.record(z.string(), z.string()).optional(),
  zones: z.array(z.string()).optional(),
  sku: sku.optional(),
  identity: z
    .looseObject({
      type: identityType,
      principalId: z.string().optional(),
      tenantId: z.string().optional(),
      userAssignedIdentities: z.record(z.string(), z.looseObject({ clientId: z.string().optional(), principalId: z.string().optional() })).optional(),
    })
    .optional(),
  systemData: systemData.optional(),
  properties: z
    .looseObject({
      publisherEmail: z.string().max(100).optional(),
      publisherName: z.string().max(100).optional(),
      notificationSenderEmail: z.string().max(100).optional(),
      provisioningState: z.string().optional(),
      targetProvisioningState: z.string().optional(),
      createdAtUtc: z.string().optional(),
      hostnameConfigurations: z.array(hostnameConfiguration).nullish(),
      additionalLocations: z.array(additionalLocation).nullish(),
      virtualNetworkConfiguration: virtualNetworkConfiguration.nullish(),
      virtualNetworkType: z.enum(['None', 'External', 'Internal']).optional(),
      certificates: z
        .array(z.looseObject({ storeName: z.enum(['CertificateAuthority', 'Root']) }))
        .max(10)
        .nullish(),
      customProperties: z.record(z.string(), z.string()).nullish(),
      apiVersionConstraint: z.looseObject({ minApiVersion: z.string().nullish() }).nullish(),
      configurationApi: z.looseObject({ legacyApi: enabledDisabled.optional() }).optional(),
      developerPortalStatus: enabledDisabled.optional(),
      legacyPortalStatus: enabledDisabled.optional(),
      disableGateway: z.boolean().optional(),
      enableClientCertificate: z.boolean().optional(),
      natGatewayState: enabledDisabled.optional(),
      platformVersion: platformVersion.optional(),
      publicNetworkAccess: enabledDisabled.optional(),
      restore: z.boolean().optional(),
    })
    .optional(),
});
