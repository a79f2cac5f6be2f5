/** What the Web UI shows for a run, read through the client: the static summary and details set at
 * start and the current details the workflow keeps up to date (the SDK's built-in metadata query). */
import type { WorkflowHandle } from '@temporalio/client';

export interface RunDetails { summary: string | undefined; staticDetails: string | undefined; currentDetails: string | undefined }

export async function readRunDetails(handle: WorkflowHandle): Promise<RunDetails> {
  const description = await handle.describe();
  const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata').catch(() => ({ currentDetails: undefined }));
  return { summary: await description.staticSummary(), staticDetails: await description.staticDetails(), currentDetails: metadata.currentDetails };
}
