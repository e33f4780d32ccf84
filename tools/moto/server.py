"""moto's server, with the few things worker-stacks' examples need and moto 5.2.5 lacks.

    python3 tools/moto/server.py -H 127.0.0.1 -p PORT [--in-progress-seconds N]

Every other argument is moto's own (`python3 -m moto.server --help`). The patches, each small, each for a gap
we hit with the repository's own clusters/ examples:

1. Change sets run like CloudFormation runs them. moto applies a change set inside ExecuteChangeSet and, when a
   resource fails, answers 500 and leaves the stack half-updated ("TODO: handle execution errors and implement
   rollback" in moto/cloudformation/models.py). Here ExecuteChangeSet answers at once; the stack is
   CREATE_IN_PROGRESS / UPDATE_IN_PROGRESS (with the "User Initiated" event) for --in-progress-seconds, then
   either completes or, when a resource fails, ends ROLLBACK_COMPLETE / UPDATE_ROLLBACK_COMPLETE with the
   resource's *_FAILED event and the old template, and the change set EXECUTE_FAILED.
2. A machine image that EC2 does not know fails the stack, as EC2 Auto Scaling does when it launches from it:
   a launch template's image fails the Auto Scaling group that uses it, a launch configuration's image fails the
   launch configuration. (moto launches from any image id unless MOTO_ENABLE_AMI_VALIDATION, and then only
   fails inside its own update loop, see 1.) This is how the playground makes a stack fail on purpose.
3. Network load balancers stay network load balancers. moto's CloudFormation creates every
   AWS::ElasticLoadBalancingV2::LoadBalancer as an application load balancer (it drops `Type` and
   `IpAddressType`), so a TCP, UDP, TCP_UDP or TLS listener on it is refused ("Listener protocol 'TCP' must be one
   of 'HTTP, HTTPS'"). Here the two properties reach moto's own CreateLoadBalancer.
4. A security group rule may come from a prefix list. moto's AWS::EC2::SecurityGroupIngress knows no
   `SourcePrefixListId` (it asserts a CIDR or a group is given); here such a rule goes to moto's own
   AuthorizeSecurityGroupIngress with the prefix list, as the EC2 API takes it.
5. Stacks made from a change set report their outputs. moto builds a stack's outputs once, from the empty
   template a CREATE change set starts with, so DescribeStacks never lists them; here they are rebuilt after
   every execution.
6. Exports follow the stack's outputs. moto registers a stack's exports (Outputs.*.Export.Name) only in CreateStack,
   so a stack made or updated by a change set exports nothing that Fn::ImportValue could find; here every executed
   change set brings the stack's exports up to date. As CloudFormation does, a change set that would remove an
   export another stack imports fails ("Export X cannot be deleted as it is in use by Y") and rolls back: node
   pools' stacks import the shared stack's exports (issue 23).

7. A stack whose update moto could not apply keeps answering DescribeStacks. moto evaluates a stack's outputs on
   every DescribeStacks; when the rollback of a failed update could not restore a resource an output names (a
   tags-only edit of a cluster with a load balancer did this), every DescribeStacks of the region answered 500
   until restart. Here the outputs stay what they were before the update, and every CloudFormation request runs
   under one lock with the settling (a DescribeStacks on another thread read the resource map half-updated).
8. A resource deleted behind CloudFormation's back is deleted from its stack. CloudFormation's resource handlers
   answer NotFound to a delete of what is already gone, which CloudFormation counts as deleted; moto raises it, and an
   update that removes such a resource answers 500 and leaves the stack half-updated. Here a NotFound (IAM's
   NoSuchEntity, EC2's *.NotFound ...) on a delete is success, and an IAM inline policy whose role is gone is
   forgotten too. And a resource an update removes is forgotten by the stack's resource map: moto kept it there, so a
   later update that adds a resource of the same logical id again got the old (deleted) one back instead of creating
   it, where CloudFormation creates it anew. `worker-stacks bootstrap` restores a deleted deployer or execution role
   this way, by two updates: without the role, then with it (issue 32 item 17).

Two endpoints, for one server shared by many users (the test suite reuses one server per jest worker,
test/environment/shared-moto.js), so that a user sees nothing another left behind:

- `POST /moto-api/reset` (moto's own) also forgets the change sets still in progress (they would otherwise settle
  into the emptied backends: a stack's resources and exports appearing out of nowhere) and the outputs kept for
  patch 7, and sets --in-progress-seconds back to what the server was started with.
- `POST /moto-api/worker-stacks/settings` with `{"inProgressSeconds": N}` sets --in-progress-seconds from now on
  (change sets already executed keep theirs); `GET` answers the settings, `{"inProgressSeconds": N}`.

Nothing else changes: every other request is plain moto. A different moto version is refused (exit 2), since
the patches reach into moto's internals; install the pinned one with `bash .ci/install-tools`.
"""

import argparse
import json
import sys
import threading
import time
import traceback

PINNED = "5.2.5"

try:
    import moto
except ImportError as e:  # pragma: no cover - the message is the point
    sys.exit(f"tools/moto/server.py: moto is not installed ({e}); install it with: bash .ci/install-tools (moto[server]=={PINNED})")
if moto.__version__ != PINNED:
    print(
        f"tools/moto/server.py: moto {moto.__version__} is installed, but these patches are for moto {PINNED}; "
        f"install it with: bash .ci/install-tools (or python3 -m pip install 'moto[server]=={PINNED}')",
        file=sys.stderr,
    )
    sys.exit(2)

import moto.server  # noqa: E402
from moto.cloudformation import models as cfn_models  # noqa: E402
from moto.cloudformation import parsing as cfn_parsing  # noqa: E402
from moto.cloudformation.exceptions import ValidationError  # noqa: E402
from moto.cloudformation.responses import CloudFormationResponse  # noqa: E402
from moto.ec2.models import ec2_backends  # noqa: E402
from moto.ec2.models.security_groups import SecurityGroupIngress  # noqa: E402
from moto.elbv2.models import FakeLoadBalancer, elbv2_backends  # noqa: E402
from moto.iam.models import InlinePolicy, iam_backends  # noqa: E402
from moto.moto_api._internal import urls as moto_api_urls  # noqa: E402
from moto.moto_api._internal.models import MotoAPIBackend  # noqa: E402
from moto.utilities.utils import get_partition  # noqa: E402

_lock = threading.RLock()
# Change sets executed and not yet settled: (due time, backend, change set).
_pending: list = []
_settings = {"in_progress_seconds": 0.0, "started_with": 0.0}


def _stack_event(stack, status, reason=None, logical_id=None, physical_id=None, resource_type=None):
    stack.events.append(
        cfn_models.Event(
            stack_id=stack.stack_id,
            stack_name=stack.name,
            logical_resource_id=logical_id or stack.name,
            physical_resource_id=physical_id or stack.stack_id,
            resource_type=resource_type or "AWS::CloudFormation::Stack",
            resource_status=status,
            resource_status_reason=reason,
            resource_properties=None,
        )
    )


def _known_image(account_id, region, image_id):
    try:
        return bool(ec2_backends[account_id][region].describe_images(ami_ids=[image_id]))
    except Exception:  # moto raises InvalidAMIID.NotFound
        return False


def _image_failure(change_set):
    """(logical id, type, reason) of the first resource that a missing image fails, or None (patch 2)."""
    stack = change_set.stack
    resources = (change_set.template_dict or {}).get("Resources", {})
    for logical_id, res in sorted(resources.items()):
        props = res.get("Properties") or {}
        if res.get("Type") == "AWS::AutoScaling::LaunchConfiguration":
            image = props.get("ImageId")
            if isinstance(image, str) and not _known_image(stack.account_id, stack.region_name, image):
                return logical_id, res["Type"], f"The image id '[{image}]' does not exist (Service: AutoScaling, Status Code: 400)"
        if res.get("Type") == "AWS::EC2::LaunchTemplate":
            image = (props.get("LaunchTemplateData") or {}).get("ImageId")
            if isinstance(image, str) and not _known_image(stack.account_id, stack.region_name, image):
                groups = [k for k, r in sorted(resources.items()) if r.get("Type") == "AWS::AutoScaling::AutoScalingGroup"]
                failed = groups[0] if groups else logical_id
                return (
                    failed,
                    resources[failed]["Type"],
                    f"You must use a valid fully-formed launch template. The image id '[{image}]' does not exist (Service: AutoScaling, Status Code: 400)",
                )
    return None


def _settle(backend, change_set):
    """Ends an executed change set: complete, or rolled back with the failing resource's event (patches 1, 2, 5)."""
    stack = change_set.stack
    create = change_set.change_set_type == "CREATE"
    failure = _image_failure(change_set)
    if failure is None:
        failure = _export_in_use(backend, stack, change_set)  # patch 6
        # A stack made by a change set resolves Fn::ImportValue against its own empty exports in moto: the backend's here.
        stack.cross_stack_resources = backend.exports
        stack.resource_map.cross_stack_resources = backend.exports
    if failure is None:
        old_template, old_parameters = dict(stack.template_dict), dict(stack.parameters or {})
        frozen = None if create else _freeze_outputs(stack)
        try:
            change_set.apply()
        except Exception as e:  # moto could not apply it: fail the stack, as CloudFormation would, not the request
            traceback.print_exc()
            failure = (stack.name, "AWS::CloudFormation::Stack", f"moto could not apply the change set: {type(e).__name__}: {e}")
            _roll_back(stack, old_template, old_parameters, create, frozen)
    if failure is None:
        stack.template = change_set.template
        stack._parse_template()
        stack.description = stack.template_dict.get("Description")
        stack.output_map = stack._create_output_map()  # patch 5
        _sync_exports(backend, stack)  # patch 6
        status = "CREATE_COMPLETE" if create else "UPDATE_COMPLETE"
        if not create:
            _stack_event(stack, "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")
        _stack_event(stack, status)
        stack.status = status
        change_set.execution_status = "EXECUTE_COMPLETE"
        return
    logical_id, resource_type, reason = failure
    verb = "create" if create else "update"
    _stack_event(stack, f"{verb.upper()}_FAILED", reason, logical_id, logical_id, resource_type)
    if create:
        _stack_event(stack, "ROLLBACK_IN_PROGRESS", f"The following resource(s) failed to create: [{logical_id}]. Rollback requested by user.")
        _stack_event(stack, "ROLLBACK_COMPLETE")
        stack.status = "ROLLBACK_COMPLETE"
    else:
        _stack_event(stack, "UPDATE_ROLLBACK_IN_PROGRESS", f"The following resource(s) failed to update: [{logical_id}].")
        _stack_event(stack, "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS")
        _stack_event(stack, "UPDATE_ROLLBACK_COMPLETE")
        stack.status = "UPDATE_ROLLBACK_COMPLETE"
    change_set.execution_status = "EXECUTE_FAILED"


def _export_names(template_dict):
    return {o["Export"]["Name"] for o in (template_dict.get("Outputs") or {}).values() if isinstance(o, dict) and isinstance(o.get("Export", {}).get("Name"), str)}


def _export_in_use(backend, stack, change_set):
    """(stack, type, reason) when the change set removes an export another stack imports, else None (patch 6)."""
    removed = _export_names(stack.template_dict or {}) - _export_names(change_set.template_dict or {})
    for name in sorted(removed):
        for other in backend.stacks.values():
            if other is stack or other.status.startswith("DELETE"):
                continue
            if f'"Fn::ImportValue": "{name}"' in json.dumps(other.template_dict or {}):
                return (stack.name, "AWS::CloudFormation::Stack", f"Export {name} cannot be deleted as it is in use by {other.name}")
    return None


def _sync_exports(backend, stack):
    """The backend's exports of `stack`, as its outputs now say (patch 6)."""
    for name in [n for n, e in backend.exports.items() if e.exporting_stack_id == stack.stack_id]:
        del backend.exports[name]
    for export in stack.exports:
        backend.exports[export.name] = export


class _FrozenOutputs(dict):
    """A stack's outputs as they were before an update, for DescribeStacks after a rollback moto could not finish (patch 7)."""

    def __init__(self, outputs, exports):
        super().__init__(outputs)
        self.exports = exports


def _freeze_outputs(stack):
    """Each output evaluated now (one that does not evaluate is left out), and the exports."""
    outputs = {}
    for key in list((stack.template_dict or {}).get("Outputs") or {}):
        try:
            outputs[key] = stack.output_map[key]
        except Exception:  # an output moto cannot evaluate now is left out, not fatal
            continue
    try:
        exports = list(stack.output_map.exports)
    except Exception:
        exports = []
    return _FrozenOutputs(outputs, exports)


def _outputs_evaluate(stack):
    try:
        _ = stack.outputs
        return True
    except Exception:
        return False


def _roll_back(stack, old_template, old_parameters, create, frozen=None):
    """Best effort, as far as moto can: a failed create leaves no resources, a failed update the old ones."""
    try:
        if create:
            stack.resource_map.delete()
        else:
            stack.resource_map.update(old_template, old_parameters)
    except Exception as e:
        print(f"tools/moto/server.py: rolling back {stack.name}: {type(e).__name__}: {e}", file=sys.stderr)
    if create:
        stack.resource_map = stack._create_resource_map()
        return
    # moto evaluates outputs on every DescribeStacks: after a rollback it could not finish (a resource the update
    # removed from its map, a load balancer above all), an output that names it would raise there, answering 500 for
    # every stack of the region until restart. The outputs stay what they were before the update (patch 7).
    stack.output_map = stack._create_output_map()
    if not _outputs_evaluate(stack) and frozen is not None:
        print(f"tools/moto/server.py: {stack.name}: outputs kept as they were before the update", file=sys.stderr)
        stack.output_map = frozen


def _settle_due():
    with _lock:
        now = time.monotonic()
        due = [p for p in _pending if p[0] <= now]
        for p in due:
            _pending.remove(p)
            _settle(p[1], p[2])


def execute_change_set(self, change_set_name, stack_name=None):
    """ExecuteChangeSet answers at once; the stack is in progress until _settle_due runs it (patch 1)."""
    with _lock:
        change_set = self.change_sets.get(change_set_name)
        if change_set is None:
            # By name: the newest of a stack that exists (moto keeps a deleted stack's change sets, AWS does not).
            named = [cs for cs in self.change_sets.values() if cs.change_set_name == change_set_name and cs.stack_id in self.stacks]
            change_set = next((cs for cs in reversed(named) if stack_name is None or stack_name in (cs.stack_name, cs.stack_id)), None)
        if change_set is None:
            raise ValidationError(stack_name)
        stack = self.stacks[change_set.stack_id]
        if stack.status.endswith("_IN_PROGRESS") and stack.status != "REVIEW_IN_PROGRESS":
            raise ValidationError(message=f"Stack:{stack.stack_id} is in {stack.status} state and can not be updated.")
        if change_set.execution_status != "AVAILABLE":
            raise ValidationError(message=f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current execution status of [{change_set.execution_status}]")
        status = f"{change_set.change_set_type}_IN_PROGRESS"
        _stack_event(stack, status, "User Initiated")
        stack.status = status
        change_set.execution_status = "EXECUTE_IN_PROGRESS"
        _pending.append((time.monotonic() + _settings["in_progress_seconds"], self, change_set))
    _settle_due()


_call_action = CloudFormationResponse.call_action


@classmethod
def load_balancer_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    """moto's own, with Type and IpAddressType passed on (patch 3)."""
    properties = cloudformation_json["Properties"]
    return elbv2_backends[account_id][region_name].create_load_balancer(
        resource_name,
        properties.get("SecurityGroups"),
        properties.get("Subnets"),
        scheme=properties.get("Scheme", "internet-facing"),
        loadbalancer_type=properties.get("Type", "application"),
        ip_address_type=properties.get("IpAddressType", "ipv4"),
    )


def call_action(self):
    # Lazily, before every CloudFormation request: what is due has happened by the time anyone looks. The request runs
    # under the same lock as the settling (patch 7): moto's server is threaded, and a DescribeStacks that ran while
    # another request applied a change set read a half-updated resource map (an output naming the load balancer
    # the update had just taken out) and answered 500.
    with _lock:
        _settle_due()
        return _call_action(self)


_ingress_from_cloudformation_json = SecurityGroupIngress.create_from_cloudformation_json


@classmethod
def ingress_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    """moto's own, plus a rule whose source is a prefix list (patch 4)."""
    p = cloudformation_json["Properties"]
    if not p.get("SourcePrefixListId") or any(p.get(k) for k in ("CidrIp", "CidrIpv6", "SourceSecurityGroupId", "SourceSecurityGroupName")):
        return _ingress_from_cloudformation_json.__func__(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
    backend = ec2_backends[account_id][region_name]
    group = backend.get_security_group_by_name_or_id(p.get("GroupId") or p.get("GroupName"))
    backend.authorize_security_group_ingress(
        group_name_or_id=group.id,
        ip_protocol=p["IpProtocol"],
        from_port=p.get("FromPort"),
        to_port=p.get("ToPort"),
        ip_ranges=[],
        prefix_list_ids=[{"PrefixListId": p["SourcePrefixListId"], "Description": p.get("Description")}],
    )
    return cls(group, p)


_stack_outputs = cfn_models.Stack.outputs.fget
_last_outputs = {}


def stack_outputs(self):
    """moto's outputs of a stack, or the last ones it could evaluate (patch 7): an output that names a resource moto's
    map has lost for now answers with what the stack last reported, never a 500 for every stack of the region."""
    try:
        outputs = _stack_outputs(self)
    except Exception as e:
        if self.stack_id not in _last_outputs:
            raise
        print(f"tools/moto/server.py: {self.name}: outputs as last reported ({type(e).__name__}: {e})", file=sys.stderr)
        return _last_outputs[self.stack_id]
    _last_outputs[self.stack_id] = outputs
    return outputs


_delete_resource = cfn_parsing.ResourceMap._delete_resource


def _not_found(e):
    code = str(getattr(e, "code", None) or getattr(e, "error_type", None) or "")
    return code == "NoSuchEntity" or code.endswith("NotFound") or type(e).__name__ in ("NoSuchEntity", "NotFoundException")


def delete_resource(self, parsed_resource, resource_json):
    """moto's own, with NotFound counted as deleted, as CloudFormation counts it (patch 8)."""
    try:
        _delete_resource(self, parsed_resource, resource_json)
    except Exception as e:
        if not _not_found(e):
            raise
        print(f"tools/moto/server.py: {type(parsed_resource).__name__} already gone, deleted from its stack: {e}", file=sys.stderr)
        if isinstance(parsed_resource, InlinePolicy):
            iam_backends[self._account_id][get_partition(self._region_name)].inline_policies.pop(parsed_resource.name, None)
    # Removed by an update: forgotten, so that adding the logical id again creates it (moto's delete() of a whole stack
    # forgets each resource itself).
    if getattr(self, "_ws_updating", False):
        for key in [k for k, v in self._parsed_resources.items() if v is parsed_resource]:
            del self._parsed_resources[key]


_resource_map_update = cfn_parsing.ResourceMap.update


def resource_map_update(self, template, parameters=None):
    """moto's own; what it removes is forgotten by delete_resource (patch 8)."""
    self._ws_updating = True
    try:
        return _resource_map_update(self, template, parameters)
    finally:
        self._ws_updating = False


_moto_reset = MotoAPIBackend.reset


def moto_reset(self):
    """moto's reset, and the wrapper's own state as the server started: no change set left to settle (shared server)."""
    with _lock:
        _pending.clear()
        _last_outputs.clear()
        _settings["in_progress_seconds"] = _settings["started_with"]
        _moto_reset(self)


def settings_response(request, full_url, headers):
    """GET or POST /moto-api/worker-stacks/settings: {"inProgressSeconds": N} (shared server)."""
    if request.method == "POST":
        try:
            seconds = json.loads(request.get_data() or b"{}").get("inProgressSeconds")
        except (ValueError, AttributeError):
            seconds = None
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            return 400, {}, json.dumps({"Error": 'POST {"inProgressSeconds": N} with N a number, 0 or more'})
        with _lock:
            _settings["in_progress_seconds"] = float(seconds)
    elif request.method != "GET":
        return 405, {}, json.dumps({"Error": "GET or POST"})
    return 200, {"Content-Type": "application/json"}, json.dumps({"inProgressSeconds": _settings["in_progress_seconds"]})


def main(argv):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--in-progress-seconds", type=float, default=0.0)
    ours, rest = parser.parse_known_args(argv)
    if ours.in_progress_seconds < 0:
        sys.exit("tools/moto/server.py: --in-progress-seconds must be 0 or more")
    _settings["in_progress_seconds"] = _settings["started_with"] = ours.in_progress_seconds
    cfn_models.CloudFormationBackend.execute_change_set = execute_change_set
    CloudFormationResponse.call_action = call_action
    cfn_models.Stack.outputs = property(stack_outputs)
    FakeLoadBalancer.create_from_cloudformation_json = load_balancer_from_cloudformation_json
    SecurityGroupIngress.create_from_cloudformation_json = ingress_from_cloudformation_json
    cfn_parsing.ResourceMap._delete_resource = delete_resource
    cfn_parsing.ResourceMap.update = resource_map_update
    MotoAPIBackend.reset = moto_reset
    moto_api_urls.url_paths["{0}/moto-api/worker-stacks/settings"] = settings_response
    moto.server.main(rest)


if __name__ == "__main__":
    main(sys.argv[1:])
