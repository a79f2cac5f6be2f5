/** A run's status and its progress query, or null when Temporal no longer knows the workflow id: what
 * the finance API and console show for a recon or settlement run that is still going. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';

export async function liveProgress<P>(client: Client, workflowId: string, query: QueryDefinition<P>): Promise<{ status: string; progress: P | null } | null> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const description = await handle.describe();
    const progress = await handle.query(query).catch(() => null);
    return { status: description.status.name, progress };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
