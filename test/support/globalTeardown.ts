import type { ChildProcess } from 'node:child_process';
import { stopChild } from '../../src/devstack/temporal';

export default async function globalTeardown(): Promise<void> {
  const child = (globalThis as { __servicesChild?: ChildProcess }).__servicesChild;
  if (child) await stopChild(child, 20_000);
}
