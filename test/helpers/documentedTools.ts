/**
 * The tools the documented commands run that the repository's packages do not bring (`az`, the
 * Azure SDK for Python), and how a reader gets each. A block that runs one which is missing fails
 * saying how to install it: it is never skipped.
 */
import { spawnSync } from 'node:child_process';

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
    // The README names Debian's and Ubuntu's own interpreter, the one `apt-get install python3-azure` serves.
    usedBy: /(^|[\s;|&(])\/usr\/bin\/python3\s+\S+\.py\b/m,
    check: `/usr/bin/python3 -c '${pythonSdkImport}'`,
    install: 'apt-get install -y python3-azure (Debian, Ubuntu), which serves /usr/bin/python3',
  },
];

function succeeds(command: string, path: string): boolean {
  return spawnSync('bash', ['-c', command], { env: { PATH: path }, stdio: 'ignore', timeout: 60_000 }).status === 0;
}

/** Why the block cannot run with that PATH (each missing tool it runs, with how to install it), or undefined. */
export function missingToolsOf(text: string, path: string): string | undefined {
  const missing = tools.filter((tool) => tool.usedBy.test(text) && !succeeds(tool.check, path));
  if (missing.length === 0) return undefined;
  return `This block runs tools that are not installed: ${missing.map((tool) => `${tool.name}: install it with ${tool.install}`).join('; ')}`;
}
