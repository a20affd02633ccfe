/** The environment certificate download of the lifecycle-management service. */
import { z } from 'zod';

export const projectId = z
  .string()
  .regex(/^[0-9]{1,10}$/, 'projectId must be a non-negative integer')
  .refine((text) => Number(text) <= 2147483647, 'projectId must fit in 32 bits');

export const environmentId = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'environmentId must be a GUID');

export const certificateDownloadResponse = z.looseObject({
  Data: z
    .looseObject({
      CertificateZipEncoded: z.string().optional(),
      CertificateSecretEncoded: z.string().optional(),
      CertificateThumbprint: z.string().optional(),
      ExpirationDateTimeUTC: z.string().optional(),
      ExpirationISODateTimeUTC: z.string().optional(),
      Filename: z.string().optional(),
    })
    .nullish(),
  IsSuccess: z.boolean(),
  OperationActivityId: z.string().optional(),
  ErrorMessage: z.string().nullish(),
  VersionEOL: z.string().nullish(),
});
export type CertificateDownloadResponse = z.infer<typeof certificateDownloadResponse>;
