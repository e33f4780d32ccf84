import {
  CloudFormationClient,
  ContinueUpdateRollbackCommand,
  CreateChangeSetCommand,
  DeleteChangeSetCommand,
  DeleteStackCommand,
  DescribeChangeSetCommand,
  DescribeStackEventsCommand,
  DescribeStacksCommand,
  ExecuteChangeSetCommand,
  GetTemplateCommand,
  GetTemplateCommandOutput,
  paginateDescribeAccountLimits,
  paginateDescribeStackEvents,
  paginateDescribeStacks,
  paginateListStacks,
  Stack,
  StackEvent as StackEventShape,
  waitUntilChangeSetCreateComplete,
} from '@aws-sdk/client-cloudformation';
import { WorkerStacksError } from '../../core/errors';
import { errorField } from './aws-error';
import { waitWithWaiters } from './sdk-stack-wait';
import {
  ChangeSetInfo,
  ChangeSetRequest,
  CloudFormationPort,
  IN_PROGRESS_STATUSES,
  StackEvent,
  StackSummary,
  WaitOptions,
} from '../../model/ports/cloudformation-port';

export interface SdkCloudFormationProps {
  readonly client: CloudFormationClient;
  /** Shortest and longest delay between waiter polls, seconds. @default 5 and 30 */
  readonly waiterDelaySeconds?: { readonly min: number; readonly max: number };
  /** How often stack events are read for progress while waiting, ms. @default 5000 */
  readonly eventPollMs?: number;
  /**
   * The CloudFormation execution role (`RoleARN` of every change set, delete and continue-rollback): with an assumed
   * deployer role, CloudFormation acts with this role's rights, never the caller's. @default none (the caller's rights)
   */
  readonly roleArn?: string;
}

const notFound = (e: unknown) => /does not exist/i.test(errorField(e, 'message'));

/** A field CloudFormation always answers with (the SDK types every field optional): without it the answer is broken, and said so. */
function answered<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new WorkerStacksError(`CloudFormation answered without ${what}`);
  return value;
}

function summary(s: Stack): StackSummary {
  return {
    name: answered(s.StackName, 'a stack name'),
    id: answered(s.StackId, 'a stack id'),
    status: String(s.StackStatus),
    statusReason: s.StackStatusReason,
    outputs: Object.fromEntries(
      (s.Outputs ?? []).flatMap((o) => (o.OutputKey === undefined ? [] : [[o.OutputKey, o.OutputValue ?? '']])),
    ),
    lastUpdated: s.LastUpdatedTime?.toISOString(),
    tags: Object.fromEntries((s.Tags ?? []).flatMap((t) => (t.Key === undefined ? [] : [[t.Key, t.Value ?? '']]))),
  };
}

function toEvent(e: StackEventShape): StackEvent {
  return {
    id: answered(e.EventId, 'an event id'),
    timestamp: e.Timestamp ?? new Date(0),
    logicalId: e.LogicalResourceId ?? '',
    resourceType: e.ResourceType ?? '',
    status: String(e.ResourceStatus),
    reason: e.ResourceStatusReason,
  };
}

/** CloudFormation through the AWS SDK, waiting with the SDK's own waiters. */
export class SdkCloudFormation implements CloudFormationPort {
  private readonly client: CloudFormationClient;
  private readonly delay: { min: number; max: number };
  private readonly eventPollMs: number;
  private readonly roleArn?: string;

  constructor(props: SdkCloudFormationProps) {
    this.roleArn = props.roleArn;
    this.client = props.client;
    this.delay = props.waiterDelaySeconds ?? { min: 5, max: 30 };
    this.eventPollMs = props.eventPollMs ?? 5000;
  }

  public async listStacks(): Promise<Map<string, StackSummary>> {
    // DescribeStacks without a name pages through every stack with its status and outputs: one call per page, not per cluster.
    const out = new Map<string, StackSummary>();
    for await (const page of paginateDescribeStacks({ client: this.client }, {})) {
      for (const s of page.Stacks ?? []) {
        const stack = summary(s);
        out.set(stack.name, stack);
      }
    }
    return out;
  }

  public async stackLimit(): Promise<number | undefined> {
    for await (const page of paginateDescribeAccountLimits({ client: this.client }, {})) {
      const limit = (page.AccountLimits ?? []).find((l) => l.Name === 'StackLimit')?.Value;
      if (limit !== undefined) return limit;
    }
    return undefined;
  }

  public async listStacksInProgress(): Promise<Map<string, StackSummary>> {
    const out = new Map<string, StackSummary>();
    for await (const page of paginateListStacks(
      { client: this.client },
      { StackStatusFilter: [...IN_PROGRESS_STATUSES] },
    )) {
      for (const s of page.StackSummaries ?? []) {
        const name = answered(s.StackName, 'a stack name');
        out.set(name, {
          name,
          id: answered(s.StackId, 'a stack id'),
          status: String(s.StackStatus),
          statusReason: s.StackStatusReason,
          outputs: {},
          lastUpdated: s.LastUpdatedTime?.toISOString(),
        });
      }
    }
    return out;
  }

  public async describeStack(name: string): Promise<StackSummary | undefined> {
    try {
      const r = await this.client.send(new DescribeStacksCommand({ StackName: name }));
      return r.Stacks?.[0] ? summary(r.Stacks[0]) : undefined;
    } catch (e) {
      if (notFound(e)) return undefined;
      throw e;
    }
  }

  public async createChangeSet(req: ChangeSetRequest): Promise<string> {
    const r = await this.client.send(
      new CreateChangeSetCommand({
        StackName: req.stackName,
        ChangeSetName: req.changeSetName,
        ChangeSetType: req.type,
        TemplateBody: req.templateBody,
        TemplateURL: req.templateUrl,
        Capabilities: [...req.capabilities] as never,
        Tags: Object.keys(req.tags)
          .sort()
          .map((Key) => ({ Key, Value: req.tags[Key] })),
        Description: req.description,
        ClientToken: req.clientToken,
        RoleARN: this.roleArn,
        // Sent on every change set, empty too: CloudFormation keeps a stack's last RollbackConfiguration when a request
        // leaves it out, so alarms removed from the object would otherwise go on rolling the stack back.
        RollbackConfiguration: {
          RollbackTriggers: (req.rollbackConfiguration?.alarmArns ?? []).map((Arn) => ({
            Arn,
            Type: 'AWS::CloudWatch::Alarm',
          })),
          MonitoringTimeInMinutes: req.rollbackConfiguration?.monitoringTimeMinutes ?? 0,
        },
      }),
    );
    return answered(r.Id, 'a change set id');
  }

  public async describeChangeSet(stackName: string, changeSetName: string): Promise<ChangeSetInfo | undefined> {
    try {
      const r = await this.client.send(
        new DescribeChangeSetCommand({ StackName: stackName, ChangeSetName: changeSetName }),
      );
      return {
        id: answered(r.ChangeSetId, 'a change set id'),
        name: r.ChangeSetName ?? changeSetName,
        status: String(r.Status),
        executionStatus: r.ExecutionStatus || undefined,
        statusReason: r.StatusReason,
        changes: r.Changes?.length ?? 0,
      };
    } catch (e) {
      if (notFound(e) || /ChangeSetNotFound/.test(errorField(e, 'name'))) return undefined;
      throw e;
    }
  }

  public async waitForChangeSet(stackName: string, changeSetName: string, timeoutMs: number): Promise<ChangeSetInfo> {
    // The waiter fails on FAILED, which includes "no changes": the description says which.
    await waitUntilChangeSetCreateComplete(
      {
        client: this.client,
        maxWaitTime: Math.ceil(timeoutMs / 1000),
        minDelay: this.delay.min,
        maxDelay: this.delay.max,
      },
      { StackName: stackName, ChangeSetName: changeSetName },
    ).catch(() => undefined);
    const info = await this.describeChangeSet(stackName, changeSetName);
    if (!info) throw new Error(`change set ${changeSetName} of ${stackName} disappeared while it was being created`);
    return info;
  }

  public async executeChangeSet(stackName: string, changeSetName: string, clientToken: string): Promise<void> {
    await this.client.send(
      new ExecuteChangeSetCommand({
        StackName: stackName,
        ChangeSetName: changeSetName,
        ClientRequestToken: clientToken,
      }),
    );
  }

  public async deleteChangeSet(stackName: string, changeSetName: string): Promise<void> {
    await this.client.send(new DeleteChangeSetCommand({ StackName: stackName, ChangeSetName: changeSetName }));
  }

  public async stackEvents(stackName: string, afterEventId?: string): Promise<StackEvent[]> {
    const events: StackEvent[] = [];
    let token: string | undefined;
    // Newest first; stop at the last one already seen (or after a few pages on the first read).
    for (let page = 0; page < 5; page++) {
      const r = await this.client.send(new DescribeStackEventsCommand({ StackName: stackName, NextToken: token }));
      for (const e of r.StackEvents ?? []) {
        if (afterEventId && e.EventId === afterEventId) return events.reverse();
        events.push(toEvent(e));
      }
      token = r.NextToken;
      if (!token || !afterEventId) break;
    }
    return events.reverse();
  }

  public async operationEvents(stackName: string): Promise<StackEvent[]> {
    // Newest first: page back until the stack's own "User Initiated" event that started the operation.
    const events: StackEvent[] = [];
    for await (const page of paginateDescribeStackEvents({ client: this.client }, { StackName: stackName })) {
      for (const e of page.StackEvents ?? []) {
        events.push(toEvent(e));
        if (
          e.LogicalResourceId === e.StackName &&
          e.ResourceStatusReason === 'User Initiated' &&
          /_IN_PROGRESS$/.test(String(e.ResourceStatus))
        )
          return events.reverse();
      }
    }
    return events.reverse();
  }

  public async getTemplate(stackName: string): Promise<string | undefined> {
    // A client stubbed for a test (aws-sdk-client-mock) answers undefined to a command it was not told about.
    const r = (await this.client.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }))) as
      GetTemplateCommandOutput | undefined;
    return r?.TemplateBody;
  }

  public async waitForStack(stackName: string, opts: WaitOptions): Promise<StackSummary | undefined> {
    return waitWithWaiters(
      this,
      { client: this.client, delay: this.delay, eventPollMs: this.eventPollMs },
      stackName,
      opts,
    );
  }

  public async deleteStack(stackName: string, clientToken: string): Promise<void> {
    await this.client.send(
      new DeleteStackCommand({ StackName: stackName, ClientRequestToken: clientToken, RoleARN: this.roleArn }),
    );
  }

  public async continueUpdateRollback(stackName: string, clientToken: string): Promise<void> {
    await this.client.send(
      new ContinueUpdateRollbackCommand({
        StackName: stackName,
        ClientRequestToken: clientToken,
        RoleARN: this.roleArn,
      }),
    );
  }
}
