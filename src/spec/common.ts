/**
 * Schema pieces shared by the three spec documents. Objects are loose: validation checks the
 * fields the spec names and keeps every other field.
 */
import { z } from 'zod';

export const apiVersionQuery = z.string({ error: 'api-version is required' }).min(1, 'api-version must not be empty');

/** The query of a management operation: the api-version, and whatever else the caller sends. */
export const managementQuery = z.looseObject({ 'api-version': apiVersionQuery });

/** ARM's `format: uuid` accepts any GUID, whatever its version and variant bits. */
export const subscriptionIdUuid = z.guid('subscriptionId must be a uuid');
export const resourceGroupName = z.string().min(1).max(90, 'resourceGroupName must be 1 to 90 characters');

export const createdByType = z.enum(['User', 'Application', 'ManagedIdentity', 'Key']);

export const systemData = z.looseObject({
  createdAt: z.string().optional(),
  createdBy: z.string().optional(),
  createdByType: createdByType.optional(),
  lastModifiedAt: z.string().optional(),
  lastModifiedBy: z.string().optional(),
  lastModifiedByType: createdByType.optional(),
});

/** ARM resource envelope fields that answers carry. */
export const resourceEnvelope = {
  id: z.string().optional(),
  name: z.string().optional(),
  type: z.string().optional(),
};

export const identityType = z.enum(['SystemAssigned', 'UserAssigned', 'SystemAssigned, UserAssigned', 'None']);

/** CloudError of Docs 1 and 2: { error: { code, message, target?, details? } }. */
export const cloudErrorBody: z.ZodType = z.lazy(() =>
  z.looseObject({
    code: z.string().optional(),
    message: z.string().optional(),
    target: z.string().optional(),
    details: z.array(cloudErrorBody).optional(),
  }),
);
export const cloudError = z.looseObject({ error: cloudErrorBody });

/** A list page: value plus an optional nextLink. */
export const listResult = <T extends z.ZodType>(item: T) => z.looseObject({ value: z.array(item), nextLink: z.string().nullish() });
