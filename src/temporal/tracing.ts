/** Temporal's half of the traces (src/observability/tracing.ts): the client interceptor that puts
 * the caller's trace into a workflow start's headers, the workflow interceptors (bundled with the
 * workflow code) whose spans leave the sandbox through the `exporter` sink, and the activity
 * interceptor that opens each activity's span under its workflow's. Always installed: with tracing
 * off the spans are no-ops and the sink drops them, so a bundle and a history replay the same way
 * whatever the configuration. */
import { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { tracingNow } from '../observability/tracing';

/** Bundled with the workflow code (bundleWorkflowCode's workflowInterceptorModules). */
export const WORKFLOW_TRACING_MODULE = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

export const tracedClientInterceptors = (): { workflow: WorkflowClientInterceptor[] } => ({ workflow: [new OpenTelemetryWorkflowClientInterceptor()] });

/** A worker's (and a replay's) interceptors and the sink its workflow spans are exported through. */
export function tracedWorkerOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const tracing = tracingNow();
  return {
    interceptors: { activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })] },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
