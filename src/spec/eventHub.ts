/** Event streaming: private endpoint connections of an event-streaming namespace. */
import { z } from 'zod';
import { resourceEnvelope, systemData } from './common';

export const endpointProvisioningState = z.enum(['Creating', 'Updating', 'Deleting', 'Succeeded', 'Canceled', 'Failed']);
export const privateLinkConnectionStatus = z.enum(['Pending', 'Approved', 'Rejected', 'Disconnected']);

export const namespaceName = z
  .string()
  .min(6, 'namespaceName must be 6 to 50 characters')
  .max(50, 'namespaceName must be 6 to 50 characters')
  .regex(/^[a-zA-Z][a-zA-Z0-9-]{6,50}[a-zA-Z0-9]$/, 'namespaceName must match ^[a-zA-Z][a-zA-Z0-9-]{6,50}[a-zA-Z0-9]$');

const properties = z.looseObject({
  privateEndpoint: z.looseObject({ id: z.string().optional() }).optional(),
  privateLinkServiceConnectionState: z.looseObject({ description: z.string().optional(), status: privateLinkConnectionStatus.optional() }).optional(),
  provisioningState: endpointProvisioningState.optional(),
});

/** The request body: every field optional. */
export const privateEndpointConnectionRequest = z.looseObject({ properties: properties.optional() });

export const privateEndpointConnection = z.looseObject({
  ...resourceEnvelope,
  location: z.string().optional(),
  properties: properties.optional(),
  systemData: systemData.optional(),
});

/** ErrorResponse of Docs 1 (endpoint 4) and 3: { error: ErrorDetail }. */
export const errorDetail: z.ZodType = z.lazy(() =>
  z.looseObject({
    code: z.string().optional(),
    message: z.string().optional(),
    target: z.string().optional(),
    details: z.array(errorDetail).optional(),
    additionalInfo: z.array(z.looseObject({ type: z.string().optional(), info: z.unknown().optional() })).optional(),
  }),
);
export const errorResponse = z.looseObject({ error: errorDetail });
