/**
 * Gallery image version and API definition declarations: every official example is valid, and each broken declaration in the
 * table yields the expected JSON path and code.
 */
import { apiDefinitionKind } from '../../../src/templates/apiDefinition';
import { validateDeclarations } from '../../../src/templates/declarationValidation';
import { galleryImageVersionKind } from '../../../src/templates/galleryImageVersion';
import { loadConformanceExamples } from '../../helpers/conformance';

const examples = loadConformanceExamples();
const galleryExamples = examples.filter((example) => example.operationId === 'GalleryImageVersions_CreateOrUpdate');
const apiExamples = examples.filter((example) => example.operationId === 'Api_CreateOrUpdate');

/** An official request body as a template declaration: its name comes from the path. */
const galleryDeclaration = (example = galleryExamples[0]!) => ({
  type: 'Vendor.Compute/galleries/images/versions',
  apiVersion: '2023-07-03',
  name: String(example.parameters.galleryImageVersionName),
  ...(example.parameters.galleryImageVersion as object),
});
const apiDeclaration = (example = apiExamples[0]!) => ({
  type: 'Vendor.ApiManagement/service/apis',
  apiVersion: String(example.parameters['api-version']),
  name: String(example.parameters.apiId),
  ...(example.parameters.parameters as object),
});

describe('official examples', () => {
  it('include six gallery image versions and thirteen APIs', () => {
    expect(galleryExamples).toHaveLength(6);
    expect(apiExamples).toHaveLength(13);
  });

  it.each(galleryExamples.map((example) => [example.file, example] as const))('%s is a valid gallery image version', (_file, example) => {
    expect(validateDeclarations(galleryDeclaration(example), galleryImageVersionKind)).toEqual({ valid: true, checked: 1, errorCount: 0, errors: [] });
  });

  it.each(apiExamples.map((example) => [example.file, example] as const))('%s is a valid API definition', (_file, example) => {
    expect(validateDeclarations(apiDeclaration(example), apiDefinitionKind)).toEqual({ valid: true, checked: 1, errorCount: 0, errors: [] });
  });
});

type Mutation = (declaration: Record<string, any>) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

function broken(base: () => Record<string, unknown>, mutate: Mutation) {
  const declaration = structuredClone(base());
  mutate(declaration);
  return declaration;
}

const vhdExample = () => galleryDeclaration(galleryExamples.find((example) => example.file.includes('WithVHD'))!);
const legacyApi = () => ({ name: 'echo-api', properties: { path: 'echo', protocols: ['Https'], serviceUrl: 'https://backend.example/echo' } });

describe('broken gallery image versions', () => {
  it.each<[string, Mutation, string, string]>([
    ['no name', (d) => delete d.name, 'name', 'Required'],
    ['no location', (d) => delete d.location, 'location', 'Required'],
    ['no storageProfile', (d) => delete d.properties.storageProfile, 'properties.storageProfile', 'Required'],
    [
      'a host caching outside the spec',
      (d) => (d.properties.storageProfile.osDiskImage.hostCaching = 'WriteBack'),
      'properties.storageProfile.osDiskImage.hostCaching',
      'InvalidEnumValue',
    ],
    [
      'a replication mode outside the spec',
      (d) => (d.properties.publishingProfile.replicationMode = 'Deep'),
      'properties.publishingProfile.replicationMode',
      'InvalidEnumValue',
    ],
    [
      'StandardSSD_LRS on a target region (only extended locations take it)',
      (d) => (d.properties.publishingProfile.targetRegions[1].storageAccountType = 'StandardSSD_LRS'),
      'properties.publishingProfile.targetRegions[1].storageAccountType',
      'InvalidEnumValue',
    ],
    [
      'a fractional replica count',
      (d) => (d.properties.publishingProfile.targetRegions[0].regionalReplicaCount = 1.5),
      'properties.publishingProfile.targetRegions[0].regionalReplicaCount',
      'InvalidType',
    ],
    [
      'a data disk without a lun',
      (d) => delete d.properties.storageProfile.dataDiskImages[0].lun,
      'properties.storageProfile.dataDiskImages[0].lun',
      'Required',
    ],
    [
      'two data disks with one lun',
      (d) => d.properties.storageProfile.dataDiskImages.push({ lun: 1, hostCaching: 'None' }),
      'properties.storageProfile.dataDiskImages[1].lun',
      'DuplicateLun',
    ],
    [
      'an encryption lun naming no data disk',
      (d) => (d.properties.publishingProfile.targetRegions[0].encryption.dataDiskImages[0].lun = 7),
      'properties.publishingProfile.targetRegions[0].encryption.dataDiskImages[0].lun',
      'UnknownDataDiskLun',
    ],
    [
      'an encryption type outside the spec',
      (d) => (d.properties.publishingProfile.targetRegions[0].encryption.osDiskImage.securityProfile = { confidentialVMEncryptionType: 'Plaintext' }),
      'properties.publishingProfile.targetRegions[0].encryption.osDiskImage.securityProfile.confidentialVMEncryptionType',
      'InvalidEnumValue',
    ],
    [
      'a UEFI template outside the spec',
      (d) => d.properties.securityProfile.uefiSettings.signatureTemplateNames.push('MyTemplate'),
      'properties.securityProfile.uefiSettings.signatureTemplateNames[1]',
      'InvalidEnumValue',
    ],
    [
      'a UEFI key type outside the spec',
      (d) => (d.properties.securityProfile.uefiSettings.additionalSignatures.kek[0].type = 'md5'),
      'properties.securityProfile.uefiSettings.additionalSignatures.kek[0].type',
      'InvalidEnumValue',
    ],
    [
      'an extended location type outside the spec',
      (d) => (d.properties.publishingProfile.targetExtendedLocations = [{ name: 'westus', extendedLocation: { name: 'z', type: 'Cloud' } }]),
      'properties.publishingProfile.targetExtendedLocations[0].extendedLocation.type',
      'InvalidEnumValue',
    ],
    [
      'virtualMachineId beside an id',
      (d) => (d.properties.storageProfile.source = { id: '/images/x', virtualMachineId: '/vms/y' }),
      'properties.storageProfile.source.virtualMachineId',
      'ExclusiveSource',
    ],
    [
      'communityGalleryImageId beside an id',
      (d) => (d.properties.storageProfile.source = { id: '/images/x', communityGalleryImageId: '/community/y' }),
      'properties.storageProfile.source.communityGalleryImageId',
      'ExclusiveSource',
    ],
  ])('%s', (_title, mutate, path, code) => {
    const result = validateDeclarations(broken(vhdExample, mutate), galleryImageVersionKind);
    expect(result.valid).toBe(false);
    expect(result.errors).toContainEqual(expect.objectContaining({ path, code }));
  });
});

describe('broken API definitions (2016-10-10)', () => {
  it('accepts the minimal valid definition', () => {
    expect(validateDeclarations(legacyApi(), apiDefinitionKind).errors).toEqual([]);
  });

  it.each<[string, Mutation, string, string]>([
    ['a name over 256 characters', (d) => (d.name = 'a'.repeat(257)), 'name', 'TooLarge'],
    ['a name with a forbidden character', (d) => (d.name = 'echo#api'), 'name', 'PatternMismatch'],
    ['a malformed revision name', (d) => (d.name = 'echo;rev=first'), 'name', 'InvalidRevisionName'],
    ['no path', (d) => delete d.properties.path, 'properties.path', 'Required'],
    ['a path over 400 characters', (d) => (d.properties.path = 'p'.repeat(401)), 'properties.path', 'TooLarge'],
    ['no protocols', (d) => delete d.properties.protocols, 'properties.protocols', 'Required'],
    ['empty protocols', (d) => (d.properties.protocols = []), 'properties.protocols', 'TooSmall'],
    ['a protocol outside Http/Https', (d) => (d.properties.protocols = ['Https', 'Ftp']), 'properties.protocols[1]', 'InvalidEnumValue'],
    ['a protocol listed twice', (d) => (d.properties.protocols = ['Https', 'https']), 'properties.protocols[1]', 'DuplicateValue'],
    ['no serviceUrl', (d) => delete d.properties.serviceUrl, 'properties.serviceUrl', 'Required'],
    ['a relative serviceUrl', (d) => (d.properties.serviceUrl = '/echo'), 'properties.serviceUrl', 'InvalidUrl'],
    ['a serviceUrl over 2000 characters', (d) => (d.properties.serviceUrl = `https://b.example/${'x'.repeat(2000)}`), 'properties.serviceUrl', 'TooLarge'],
  ])('%s', (_title, mutate, path, code) => {
    const result = validateDeclarations(broken(legacyApi, mutate), apiDefinitionKind);
    expect(result.errors).toContainEqual(expect.objectContaining({ path, code }));
  });

  it('accepts a revision name and a child-resource name', () => {
    expect(validateDeclarations({ ...legacyApi(), name: 'apim1/echo-api;rev=3' }, apiDefinitionKind).errors).toEqual([]);
  });
});

describe('templates', () => {
  it('picks the matching resources of a template and prefixes their paths', () => {
    const template = {
      $schema: 'https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#',
      resources: [
        { type: 'Vendor.Storage/storageAccounts', name: 'ignored' },
        { type: 'Vendor.ApiManagement/service/apis', apiVersion: '2016-10-10', ...legacyApi() },
        {
          type: 'Vendor.ApiManagement/service/apis',
          apiVersion: '2016-10-10',
          name: 'bad',
          properties: { path: 'x', protocols: ['Gopher'], serviceUrl: 'https://b.example' },
        },
      ],
    };
    expect(validateDeclarations(template, apiDefinitionKind)).toEqual({
      valid: false,
      checked: 2,
      errorCount: 1,
      errors: [expect.objectContaining({ path: 'resources[2].properties.protocols[0]', code: 'InvalidEnumValue' })],
    });
  });

  it('does not judge template expressions, which only deployment resolves', () => {
    const declaration = {
      name: "[concat(parameters('service'), '/echo')]",
      apiVersion: '2016-10-10',
      properties: { path: "[parameters('path')]", protocols: "[variables('protocols')]", serviceUrl: "[parameters('backend')]" },
    };
    expect(validateDeclarations(declaration, apiDefinitionKind).errors).toEqual([]);
  });

  it('says when a template has no resource of the type', () => {
    expect(validateDeclarations({ resources: [] }, galleryImageVersionKind).errors).toEqual([
      expect.objectContaining({ path: 'resources', code: 'NoMatchingResource' }),
    ]);
  });
});

describe('bounds', () => {
  const brokenApi = (index: number) => ({
    type: 'Vendor.ApiManagement/service/apis',
    name: `a${index}`,
    properties: { path: 'x', protocols: ['Gopher'], serviceUrl: 'https://b.example' },
  });

  it('lists at most 100 errors and counts them all', () => {
    const result = validateDeclarations({ resources: Array.from({ length: 250 }, (_, index) => brokenApi(index)) }, apiDefinitionKind);
    expect(result).toMatchObject({ valid: false, checked: 250, errorCount: 250 });
    expect(result.errors).toHaveLength(100);
    expect(result.errors[99]!.path).toBe('resources[99].properties.protocols[0]');
  });

  it('skips errors under expressions in work linear in issues and expressions (counted, not timed)', () => {
    // Many expressions and many issues in one declaration: every issue under an expression is
    // left out, every other one is reported, whatever the numbers.
    const protocols = Array.from({ length: 2000 }, (_, index) => (index % 2 === 0 ? `[variables('p${index}')]` : 'Gopher'));
    const result = validateDeclarations({ name: 'echo', properties: { path: 'x', protocols, serviceUrl: 'https://b.example' } }, apiDefinitionKind);
    expect(result.errorCount).toBe(1000);
    expect(result.errors.every((error) => /protocols\[\d*[13579]\]$/.test(error.path))).toBe(true);
  });
});
