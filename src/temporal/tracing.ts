/** Temporal's half of the traces (src/observability/tracing.ts): the client interceptor that puts
 * the caller's trace into a workflow start's headers, the workflow interceptors (bundled with the
 * workflow code) whose spans leave the sandbox through the `exporter` sink, and the activity
 * interceptor that opens each activity's span under its workflow's. Installed when the process
 * traces (TRACES_OTLP_URL); a history replays the same with them or without (the replay test runs
 * both ways): they add headers to the commands, never a command. */
import { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { tracingNow } from '../observability/tracing';

/** Bundled with the workflow code (bundleWorkflowCode's workflowInterceptorModules). */
export const WORKFLOW_TRACING_MODULE = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

export const tracedClientInterceptors = (): { workflow: WorkflowClientInterceptor[] } => ({ workflow: [new OpenTelemetryWorkflowClientInterceptor()] });

/** A traced worker's (and replay's) interceptors and the sink its workflow spans leave through. */
export function tracedWorkerOptions(traced: boolean): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!traced) return {};
  const tracing = tracingNow();
  return {
    interceptors: { activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })] },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
