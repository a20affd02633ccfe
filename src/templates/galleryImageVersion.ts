/**
 * The gallery image version declaration (version 2023-07-03), with the rules the
 * service would enforce: required fields, every enum, integer replica counts, data disk LUNs
 * required and unique, encryption LUNs naming declared data disks, and the exclusive sources.
 */
import { z } from 'zod';
import { withFieldsOnFirstRead } from '../loading';
import { addDeclarationIssue, type DeclarationKind } from './declarationValidation';

/** The declaration's schema, built on the first validation (src/loading/fieldsOnFirstRead.ts). */
function declarationSchema() {
  const hostCaching = z.enum(['None', 'ReadOnly', 'ReadWrite']);
  const regionStorageAccountType = z.enum(['Premium_LRS', 'Standard_LRS', 'Standard_ZRS']);
  /** Extended locations also take StandardSSD_LRS (GalleryTargetExtendedLocation). */
  const extendedLocationStorageAccountType = z.enum(['Premium_LRS', 'StandardSSD_LRS', 'Standard_LRS', 'Standard_ZRS']);
  const replicaCount = z.number().int('a replica count must be a whole number').min(1);
  const lun = z.number().int('lun must be a whole number').min(0);

  const diskImageSource = z.looseObject({ id: z.string().optional(), storageAccountId: z.string().optional(), uri: z.string().optional() });

  const encryptionImages = z.looseObject({
    osDiskImage: z
      .looseObject({
        diskEncryptionSetId: z.string().optional(),
        securityProfile: z
          .looseObject({
            confidentialVMEncryptionType: z.enum(['EncryptedVMGuestStateOnlyWithPmk', 'EncryptedWithCmk', 'EncryptedWithPmk', 'NonPersistedTPM']).optional(),
            secureVMDiskEncryptionSetId: z.string().optional(),
          })
          .optional(),
      })
      .optional(),
    dataDiskImages: z.array(z.looseObject({ lun, diskEncryptionSetId: z.string().optional() })).optional(),
  });

  const uefiKey = z.looseObject({ type: z.enum(['sha256', 'x509']), value: z.array(z.string()) });

  const storageProfile = z.looseObject({
    source: z
      .looseObject({ id: z.string().optional(), communityGalleryImageId: z.string().optional(), virtualMachineId: z.string().optional() })
      .superRefine((source, ctx) => {
        // The service: communityGalleryImageId only when the source is a community gallery image,
        // virtualMachineId only when capturing a virtual machine: each stands alone.
        for (const exclusive of ['communityGalleryImageId', 'virtualMachineId'] as const) {
          if (source[exclusive] !== undefined) {
            const others = (['id', 'communityGalleryImageId', 'virtualMachineId'] as const).filter(
              (field) => field !== exclusive && source[field] !== undefined,
            );
            if (others.length > 0)
              addDeclarationIssue(ctx, 'ExclusiveSource', `${exclusive} must be the only source field; remove ${others.join(' and ')}.`, [exclusive]);
          }
        }
      })
      .optional(),
    osDiskImage: z.looseObject({ hostCaching: hostCaching.optional(), source: diskImageSource.optional() }).optional(),
    dataDiskImages: z.array(z.looseObject({ lun, hostCaching: hostCaching.optional(), source: diskImageSource.optional() })).optional(),
  });

  const publishingProfile = z.looseObject({
    endOfLifeDate: z.string().optional(),
    excludeFromLatest: z.boolean().optional(),
    replicaCount: replicaCount.optional(),
    replicationMode: z.enum(['Full', 'Shallow']).optional(),
    storageAccountType: regionStorageAccountType.optional(),
    targetRegions: z
      .array(
        z.looseObject({
          name: z.string().min(1),
          regionalReplicaCount: replicaCount.optional(),
          excludeFromLatest: z.boolean().optional(),
          storageAccountType: regionStorageAccountType.optional(),
          encryption: encryptionImages.optional(),
        }),
      )
      .optional(),
    targetExtendedLocations: z
      .array(
        z.looseObject({
          name: z.string().min(1).optional(),
          extendedLocation: z.looseObject({ name: z.string().optional(), type: z.enum(['EdgeZone', 'Unknown']).optional() }).optional(),
          extendedLocationReplicaCount: replicaCount.optional(),
          storageAccountType: extendedLocationStorageAccountType.optional(),
          encryption: encryptionImages.optional(),
        }),
      )
      .optional(),
  });

  return z
    .looseObject({
      name: z.string().min(1),
      location: z.string().min(1),
      tags: z.record(z.string(), z.string()).optional(),
      properties: z.looseObject({
        storageProfile,
        publishingProfile: publishingProfile.optional(),
        safetyProfile: z.looseObject({ allowDeletionOfReplicatedLocations: z.boolean().optional() }).optional(),
        securityProfile: z
          .looseObject({
            uefiSettings: z
              .looseObject({
                signatureTemplateNames: z
                  .array(z.enum(['MicrosoftUefiCertificateAuthorityTemplate', 'MicrosoftWindowsTemplate', 'NoSignatureTemplate']))
                  .optional(),
                additionalSignatures: z
                  .looseObject({ db: z.array(uefiKey).optional(), dbx: z.array(uefiKey).optional(), kek: z.array(uefiKey).optional(), pk: uefiKey.optional() })
                  .optional(),
              })
              .optional(),
          })
          .optional(),
      }),
    })
    .superRefine((declaration, ctx) => {
      const properties = declaration.properties as z.infer<typeof storageProfile> & Record<string, unknown>;
      const profile = (properties?.storageProfile ?? {}) as z.infer<typeof storageProfile>;
      const dataDisks = profile.dataDiskImages ?? [];
      const seen = new Map<number, number>();
      dataDisks.forEach((disk, index) => {
        const first = seen.get(disk.lun);
        if (first !== undefined)
          addDeclarationIssue(ctx, 'DuplicateLun', `lun ${disk.lun} is used by dataDiskImages[${first}] already.`, [
            'properties',
            'storageProfile',
            'dataDiskImages',
            index,
            'lun',
          ]);
        else seen.set(disk.lun, index);
      });
      // An encryption entry must name a declared data disk; when the disks come from a source
      // image or VM instead, they are not declared here and cannot be checked.
      if (!profile.dataDiskImages) return;
      const publishing = (properties as { publishingProfile?: z.infer<typeof publishingProfile> }).publishingProfile;
      const targets = [
        ...(publishing?.targetRegions ?? []).map((target, index) => ({ target, path: ['targetRegions', index] })),
        ...(publishing?.targetExtendedLocations ?? []).map((target, index) => ({ target, path: ['targetExtendedLocations', index] })),
      ];
      for (const { target, path } of targets) {
        (target.encryption?.dataDiskImages ?? []).forEach((entry, index) => {
          if (!seen.has(entry.lun)) {
            addDeclarationIssue(ctx, 'UnknownDataDiskLun', `lun ${entry.lun} names no data disk in storageProfile.dataDiskImages.`, [
              'properties',
              'publishingProfile',
              ...path,
              'encryption',
              'dataDiskImages',
              index,
              'lun',
            ]);
          }
        });
      }
    });
}

export const galleryImageVersionKind: DeclarationKind = withFieldsOnFirstRead({ typeSuffix: 'Compute/galleries/images/versions' }, ['schema'], () => ({
  schema: declarationSchema(),
}));
