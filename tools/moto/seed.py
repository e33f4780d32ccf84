"""Creates in an AWS emulator what cluster objects reference, and prints which new id stands for which old one.

    python3 tools/moto/seed.py ENDPOINT < wants.json > ids.json

wants.json, per region: the VPCs with their subnets (id and zone), machine images, security groups (with their
VPC), prefix lists and certificates the objects name. ids.json: {"<old id or ARN>": "<new id or ARN>"}. Used by
`worker-stacks playground` (lib/playground/network.ts) against tools/moto/server.py; boto3 comes with moto.
"""

import ipaddress
import json
import sys

import boto3


def client(service, endpoint, region):
    return boto3.client(service, endpoint_url=endpoint, region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing")


def seed(endpoint, wants):
    ids = {}
    for region, want in sorted(wants.items()):
        ec2 = client("ec2", endpoint, region)
        for n, (old_vpc, vpc) in enumerate(sorted(want.get("vpcs", {}).items())):
            cidr = ipaddress.ip_network(f"10.{n}.0.0/16")
            new_vpc = ec2.create_vpc(CidrBlock=str(cidr), TagSpecifications=[{"ResourceType": "vpc", "Tags": [{"Key": "Name", "Value": f"playground {old_vpc}"}]}])["Vpc"]["VpcId"]
            ids[old_vpc] = new_vpc
            blocks = cidr.subnets(new_prefix=24)
            for subnet in vpc["subnets"]:
                ids[subnet["id"]] = ec2.create_subnet(VpcId=new_vpc, CidrBlock=str(next(blocks)), AvailabilityZone=subnet["az"])["Subnet"]["SubnetId"]
            for sg in vpc.get("securityGroups", []):
                ids[sg] = ec2.create_security_group(VpcId=new_vpc, GroupName=f"playground-{sg}", Description=f"stands for {sg}")["GroupId"]
        for image in want.get("images", []):
            # An image of its own per id: the examples stay distinguishable, and ids that EC2 knows (see server.py, patch 2).
            ids[image] = ec2.register_image(Name=f"playground {image}", Architecture="x86_64", RootDeviceName="/dev/xvda", VirtualizationType="hvm")["ImageId"]
        for pl in want.get("prefixLists", []):
            ids[pl] = ec2.create_managed_prefix_list(PrefixListName=f"playground-{pl}", MaxEntries=10, AddressFamily="IPv4", Entries=[{"Cidr": "192.0.2.0/24"}])["PrefixList"]["PrefixListId"]
        acm = client("acm", endpoint, region)
        for n, arn in enumerate(want.get("certificates", [])):
            ids[arn] = acm.request_certificate(DomainName=f"cert{n}.playground.example.com")["CertificateArn"]
    return ids


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 tools/moto/seed.py ENDPOINT < wants.json")
    print(json.dumps(seed(sys.argv[1], json.load(sys.stdin)), sort_keys=True))
