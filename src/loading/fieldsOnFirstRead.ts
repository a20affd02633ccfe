/**
 * Declarations whose schemas are built on first use (the catalogue's operations, the app's
 * routes): a cold start registers functions from their names and paths and builds no schema
 * until a call or the OpenAPI document reads one.
 */

/** `entry` with the fields `names`, read from what `build` returns; it runs on the first read of any. */
export function withFieldsOnFirstRead<Entry extends object, Fields extends object>(
  entry: Entry,
  names: readonly (keyof Fields & string)[],
  build: () => Fields,
): Entry & Fields {
  let built: Fields | undefined;
  const declaration = { ...entry } as Entry & Fields;
  for (const name of names) {
    Object.defineProperty(declaration, name, { get: () => (built ??= build())[name], enumerable: true });
  }
  return declaration;
}
