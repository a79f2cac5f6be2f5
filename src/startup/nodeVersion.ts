/** The Node.js this runs on must be supported (22 or newer; Node.js 20 reached end of life on
 * 2026-04-30). Pure: the problem line for a version, or null. */
export const MIN_NODE_MAJOR = 22;

export function nodeVersionProblem(version: string = process.versions.node): string | null {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return null;
  return `Node.js ${version} is not supported: this needs Node.js ${MIN_NODE_MAJOR} or newer (24 LTS; \`nvm install\` reads .nvmrc), `
    + 'or run  export PATH="$(bash scripts/install-node-lts.sh):$PATH"  to install Node.js 24 from the npm registry, then try again';
}
