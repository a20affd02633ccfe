/**
 * The tools the documented commands run that the repository's packages do not bring (`az`, the
 * Azure SDK for Python), and how a reader gets each. A block that runs one which is missing fails
 * saying how to install it: it is never skipped.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

interface DocumentedTool {
  /** What the reader installs. */
  name: string;
  /** Whether a block's text runs it. */
  usedBy: RegExp;
  /** A bash command that succeeds where it is installed. */
  check: string;
  install: string;
}

const pythonSdkImport = 'import azure.identity, azure.mgmt.containerinstance';

const tools: DocumentedTool[] = [
  {
    name: 'azure-cli (az)',
    usedBy: /(^|[\s;|&(])az\s/m,
    check: 'command -v az',
    install: 'apt-get install -y azure-cli (Debian, Ubuntu), or https://learn.microsoft.com/cli/azure/install-azure-cli',
  },
  {
    name: 'the Azure SDK for Python (azure-identity, azure-mgmt-containerinstance)',
    usedBy: /(^|[\s;|&(])python3\s+\S+\.py\b/m,
    check: `python3 -c '${pythonSdkImport}'`,
    install: 'apt-get install -y python3-azure (Debian, Ubuntu: for /usr/bin/python3), or pip install azure-identity azure-mgmt-containerinstance',
  },
];

/** Debian's and Ubuntu's own interpreter, the one `apt-get install python3-azure` serves. */
const systemPython = '/usr/bin/python3';

function succeeds(command: string, path: string): boolean {
  return spawnSync('bash', ['-c', command], { env: { PATH: path }, stdio: 'ignore', timeout: 60_000 }).status === 0;
}

/**
 * The PATH the blocks run with: this process's, unless the `python3` first on it (a pyenv, a
 * virtual environment) lacks the Azure SDK for Python which the system's has - then a folder whose
 * `python3` is the system's comes first, as `python3` is on a machine where
 * `apt-get install python3-azure` is how the SDK was installed. Nothing else changes.
 */
export function readerPath(): { path: string; linkFolder?: string } {
  const path = process.env.PATH ?? '';
  if (succeeds(`python3 -c '${pythonSdkImport}'`, path) || !succeeds(`${systemPython} -c '${pythonSdkImport}'`, path)) return { path };
  const linkFolder = mkdtempSync(join(tmpdir(), 'documented-python-'));
  symlinkSync(systemPython, join(linkFolder, 'python3'));
  return { path: `${linkFolder}${delimiter}${path}`, linkFolder };
}

/** Why the block cannot run with that PATH (each missing tool it runs, with how to install it), or undefined. */
export function missingToolsOf(text: string, path: string): string | undefined {
  const missing = tools.filter((tool) => tool.usedBy.test(text) && !succeeds(tool.check, path));
  if (missing.length === 0) return undefined;
  return `This block runs tools that are not installed: ${missing.map((tool) => `${tool.name}: install it with ${tool.install}`).join('; ')}`;
}
