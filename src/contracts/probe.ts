/** Contract of the probe workflow: proves worker → activity → PostgreSQL and search attributes work. */

export const probeWorkflowId = (tag: string): string => `probe-${tag}`;

export interface ProbeInput { message: string }
export interface ProbeResult { rowId: number; readBack: string }

