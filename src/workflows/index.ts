/** The workflow bundle's entry: every workflow type the worker serves. */
export { probeWorkflow } from './probe';
