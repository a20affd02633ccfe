// Kept for src/chatops until its imports move to src/rules/redaction.ts.
export * from '../rules/redaction';
