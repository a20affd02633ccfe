/**
 * Whether the app runs in Azure, from what the platform sets; a module of its own, with nothing
 * to load, so the local host reads it at start as the app does.
 */
/**
 * What the platform sets on an instance in Azure, by plan, as the Functions host itself tells them
 * apart (its EnvironmentExtensions): App Service plans and Windows Consumption set
 * WEBSITE_INSTANCE_ID; every plan's site settings hold WEBSITE_SKU (FlexConsumption, Dynamic, ...);
 * a Flex Consumption instance is named by WEBSITE_POD_NAME. Core Tools sets none. Not
 * CONTAINER_NAME, which the host reads for Linux Consumption but many a container outside Azure
 * sets too (a development container, a CI runner): there it would stop a local start.
 */
export const azureMarkers = ['WEBSITE_INSTANCE_ID', 'WEBSITE_SKU', 'WEBSITE_POD_NAME'] as const;

/** The first platform setting that says the app runs in Azure, or undefined locally. */
export const azureMarkerOf = (settings: Partial<Record<(typeof azureMarkers)[number], string>>) =>
  azureMarkers.find((name) => settings[name] !== undefined && settings[name] !== '');
