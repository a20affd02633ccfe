/** Reads the official examples in ../shared/conformance (the test fixtures). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ConformanceExample {
  file: string;
  operationId: string;
  parameters: Record<string, unknown>;
  responses: Record<string, { body?: unknown; headers?: Record<string, string> }>;
}

/** The conformance folder: beside the repository in CI and in a developer's work tree. */
export const conformanceRoot = [resolve(__dirname, '..', '..', '..', 'shared', 'conformance'), resolve(__dirname, '..', '..', 'shared', 'conformance')].find(existsSync) ?? '';

export function loadConformanceExamples(): ConformanceExample[] {
  if (!conformanceRoot) throw new Error('The conformance fixtures (../shared/conformance) were not found.');
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
