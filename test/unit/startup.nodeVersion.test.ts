/** `npm run dev` refuses an unsupported Node.js (20 reached end of life on 2026-04-30) and says what
 * to install. */
import { nodeVersionProblem } from '../../src/startup/nodeVersion';

describe('the Node.js version check', () => {
  test('when the version is 22 or newer, then there is no problem; when older, then the line names it and what to install', () => {
    expect(nodeVersionProblem('22.12.0')).toBeNull();
    expect(nodeVersionProblem('24.22.3')).toBeNull();
    const problem = nodeVersionProblem('20.20.2');
    expect(problem).toContain('Node.js 20.20.2 is not supported');
    expect(problem).toContain('scripts/install-node-lts.sh');
    expect(problem).toContain('.nvmrc');
  });
});
