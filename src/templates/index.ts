/** Declaration rules of templates (gallery image versions, API definitions) and the gateway's custom properties. */
export { apiDefinitionKind } from './apiDefinition';
export { validateDeclarations } from './declarationValidation';
export type { DeclarationKind } from './declarationValidation';
export { galleryImageVersionKind } from './galleryImageVersion';
export { buildCustomProperties, gatewaySettingsRequest, validateCustomProperties } from './gatewayProperties';
