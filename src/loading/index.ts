/** How the app's code and packages load: the code cache, and packages loaded on first use. */
export { withFieldsOnFirstRead } from './fieldsOnFirstRead';
export { forgePackage, identityPackage, onFirstUse, storageBlobPackage, yauzlPackage } from './lazyPackages';
export { writeWhole } from './writeWhole';
