/** A stored path read back into its route values (pathParamsOf) is the inverse of filling it (fillPath), for every operation. */
import { fillPath, operations, pathParamsOf, resolvePathTemplate } from '../../../src/spec/catalogue';

const valueOf = (name: string) =>
  name === 'scope' ? 'subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/my rg' : `${name}-value with/space?and#marks`;

it.each(operations.map((operation) => [operation.name, operation] as const))(
  '%s: a filled path reads back as the values it was filled with',
  (_name, operation) => {
    const template = resolvePathTemplate(operation, 'Vendor');
    const params = Object.fromEntries([...template.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, valueOf(name!)]));
    expect(pathParamsOf(template, fillPath(template, params))).toEqual(params);
  },
);

it('reads no values from a path of another template, or a scope path without its suffix', () => {
  const scoped = operations.find((operation) => operation.pathTemplate.startsWith('{scope}/'))!;
  const unscoped = operations.find((operation) => !operation.pathTemplate.startsWith('{scope}/') && operation.pathTemplate.includes('{'))!;
  expect(pathParamsOf(resolvePathTemplate(unscoped, 'Vendor'), 'subscriptions/x/providers/Other.Thing/things')).toBeUndefined();
  expect(pathParamsOf(resolvePathTemplate(scoped, 'Vendor'), 'providers')).toBeUndefined();
});
