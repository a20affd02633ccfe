/**
 * Every official example of a catalogued operation is accepted by the app's schemas: its path
 * parameters, query and body as a request, and each documented response body.
 */
import { operations } from '../../../src/spec/catalogue';
import { loadConformanceExamples } from '../../helpers/conformance';

const examples = loadConformanceExamples();
const catalogued = examples.filter((example) => operations.some((operation) => operation.operationId === example.operationId));

describe('conformance examples against the catalogue', () => {
  it('covers every catalogued management operation with at least one example', () => {
    const covered = new Set(catalogued.map((example) => example.operationId));
    const management = operations.filter((operation) => operation.upstream === 'management').map((operation) => operation.operationId);
    expect(management.filter((operationId) => !covered.has(operationId))).toEqual([]);
  });

  describe.each(catalogued.map((example) => [example.file, example] as const))('%s', (_file, example) => {
    const operation = operations.find((candidate) => candidate.operationId === example.operationId)!;

    it('has valid path parameters and query', () => {
      const params = Object.fromEntries(Object.keys(operation.pathParams.shape).map((name) => [name, String(example.parameters[name])]));
      expect(operation.pathParams.safeParse(params).error?.issues).toBeUndefined();
      const query = Object.fromEntries(
        ['api-version', '$filter'].filter((name) => name in example.parameters).map((name) => [name, String(example.parameters[name])]),
      );
      expect(operation.query.safeParse(query).error?.issues).toBeUndefined();
      expect(example.parameters['api-version']).toBe(operation.apiVersion);
    });

    if (operation.body) {
      it('has a valid request body', () => {
        const body = example.parameters[operation.body!.name];
        expect(operation.body!.schema.safeParse(body).error?.issues).toBeUndefined();
      });
    }

    it('has response bodies valid for their status', () => {
      for (const [status, response] of Object.entries(example.responses)) {
        const schema = operation.responses[Number(status)];
        expect(schema).not.toBeUndefined();
        if (schema && response.body !== undefined) expect(schema.safeParse(response.body).error?.issues).toBeUndefined();
      }
    });
  });
});
