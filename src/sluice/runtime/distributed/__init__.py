"""Distributed mode's group membership: Kafka Connect's ``connect`` group protocol
(:mod:`.protocol`), the leader's assignor (:mod:`.assignor`) and the worker's membership
(:mod:`.member`), over Kafka's group coordination (:mod:`.kafka_group`)."""

from sluice.runtime.distributed.assignor import (
    AssignorState,
    ClusterAssignment,
    ConnectorsAndTasks,
    MemberAssignment,
    eager_assign,
    incremental_cooperative_assign,
)
from sluice.runtime.distributed.member import (
    ConfigSnapshot,
    RebalanceListener,
    WorkerGroupMember,
)
from sluice.runtime.distributed.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    Assignment,
    ConnectProtocolCompatibility,
    TaskId,
    WorkerState,
)

__all__ = [
    "CONFIG_MISMATCH",
    "NO_ERROR",
    "Assignment",
    "AssignorState",
    "ClusterAssignment",
    "ConfigSnapshot",
    "ConnectProtocolCompatibility",
    "ConnectorsAndTasks",
    "MemberAssignment",
    "RebalanceListener",
    "TaskId",
    "WorkerGroupMember",
    "WorkerState",
    "eager_assign",
    "incremental_cooperative_assign",
]
