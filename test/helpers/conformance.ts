/** Reads the official examples kept in test/fixtures/conformance (see its README for their source). */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ConformanceExample {
  file: string;
  operationId: string;
  parameters: Record<string, unknown>;
  responses: Record<string, { body?: unknown; headers?: Record<string, string> }>;
}

/** Inside the repository, so a clone alone runs every test. */
export const conformanceRoot = resolve(__dirname, '..', 'fixtures', 'conformance');

export function loadConformanceExamples(): ConformanceExample[] {
  return readdirSync(conformanceRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((folder) =>
      readdirSync(join(conformanceRoot, folder.name))
        .filter((name) => name.endsWith('.json'))
        .map((name) => {
          const json = JSON.parse(readFileSync(join(conformanceRoot, folder.name, name), 'utf8')) as Omit<ConformanceExample, 'file' | 'operationId'>;
          return { file: `${folder.name}/${name}`, operationId: folder.name.split('.')[1]!, parameters: json.parameters, responses: json.responses };
        }),
    );
}
