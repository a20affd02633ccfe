/**
 * The API definition declaration: version 2016-10-10, with the 2021-08-01 fields
 * the spec names. 2016-10-10 requires path, protocols and serviceUrl; the 2021-08-01 examples
 * create APIs by import without protocols or serviceUrl, so there only their form is checked.
 */
import { z } from 'zod';
import { withFieldsOnFirstRead } from '../loading';
import { addDeclarationIssue, isTemplateExpression, type DeclarationKind } from './declarationValidation';

/** 2016-10-10 knows Http and Https; the 2021-08-01 examples add the WebSocket schemes. */
const protocolsByVersion = { legacy: ['Http', 'Https'], later: ['Http', 'Https', 'Ws', 'Wss'] };

function isAbsoluteUrl(text: string): boolean {
  try {
    return Boolean(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** The API's own name: the last segment of a child-resource name such as `service/api`. */
function ownName(name: string): string {
  return name.split('/').pop() ?? name;
}

/** The declaration's schema, built on the first validation (src/loading/fieldsOnFirstRead.ts). */
function declarationSchema() {
  return z
    .looseObject({
      name: z.string().min(1),
      apiVersion: z.string().optional(),
      properties: z.looseObject({
        path: z.string().max(400, 'path must be at most 400 characters').optional(),
        protocols: z.array(z.string()).optional(),
        serviceUrl: z.string().min(1).max(2000, 'serviceUrl must be 1 to 2000 characters').optional(),
        description: z.string().optional(),
        displayName: z.string().optional(),
        apiRevisionDescription: z.string().optional(),
        apiVersion: z.string().optional(),
        apiVersionDescription: z.string().optional(),
        subscriptionRequired: z.boolean().optional(),
        subscriptionKeyParameterNames: z.looseObject({ header: z.string().optional(), query: z.string().optional() }).optional(),
        authenticationSettings: z
          .looseObject({ oAuth2: z.looseObject({ authorizationServerId: z.string().optional(), scope: z.string().optional() }).nullish() })
          .optional(),
      }),
    })
    .superRefine((declaration, ctx) => {
      const name = ownName(declaration.name);
      if (!isTemplateExpression(declaration.name)) {
        if (name.length < 1 || name.length > 256) addDeclarationIssue(ctx, 'TooLarge', 'The API name must be 1 to 256 characters.', ['name']);
        if (!/^[^*#&+:<>?]+$/.test(name)) addDeclarationIssue(ctx, 'PatternMismatch', 'The API name must not contain * # & + : < > ?', ['name']);
        if (name.includes(';') && !/^[^;]+;rev=[1-9][0-9]*$/.test(name))
          addDeclarationIssue(ctx, 'InvalidRevisionName', 'A revision is named <api>;rev=<number from 1>.', ['name']);
      }
      const properties = declaration.properties;
      const legacy = (declaration.apiVersion ?? '2016-10-10') === '2016-10-10';
      if (legacy) {
        for (const field of ['path', 'protocols', 'serviceUrl'] as const) {
          if (properties[field] === undefined)
            addDeclarationIssue(ctx, 'Required', `properties.${field} is required at api-version 2016-10-10.`, ['properties', field]);
        }
      }
      if (properties.protocols !== undefined && !isTemplateExpression(properties.protocols)) {
        if (properties.protocols.length === 0) addDeclarationIssue(ctx, 'TooSmall', 'protocols must name Http, Https or both.', ['properties', 'protocols']);
        const seen = new Set<string>();
        properties.protocols.forEach((protocol, index) => {
          const allowed = legacy ? protocolsByVersion.legacy : protocolsByVersion.later;
          const known = allowed.find((candidate) => candidate.toLowerCase() === protocol.toLowerCase());
          if (!known && !isTemplateExpression(protocol))
            addDeclarationIssue(ctx, 'InvalidEnumValue', `"${protocol}" is not a protocol: use ${allowed.join(', ')}.`, ['properties', 'protocols', index]);
          else if (known && seen.has(known)) addDeclarationIssue(ctx, 'DuplicateValue', `${known} is listed twice.`, ['properties', 'protocols', index]);
          if (known) seen.add(known);
        });
      }
      if (properties.serviceUrl !== undefined && !isTemplateExpression(properties.serviceUrl) && !isAbsoluteUrl(properties.serviceUrl)) {
        addDeclarationIssue(ctx, 'InvalidUrl', 'serviceUrl must be an absolute URL.', ['properties', 'serviceUrl']);
      }
    });
}

export const apiDefinitionKind: DeclarationKind = withFieldsOnFirstRead({ typeSuffix: 'ApiManagement/service/apis' }, ['schema'], () => ({
  schema: declarationSchema(),
}));
