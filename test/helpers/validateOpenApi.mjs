// Validates the OpenAPI document read from standard input with @seriousme/openapi-schema-validator
// (an ES module, hence this separate script) and prints { valid, errors } as JSON.
import { Validator } from '@seriousme/openapi-schema-validator';

let text = '';
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(text));
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? [] }));
