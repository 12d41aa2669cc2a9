"""ORM models, one module per family of tables. Importing this package registers them all."""

from agentbank.db.base import Base
from agentbank.db.models.access import AccessToken, Client, Person, Project, ProjectApproval, ProjectMember
from agentbank.db.models.agents import Agent, Memory
from agentbank.db.models.answers import AnswerRecord
from agentbank.db.models.audit import AuditCheckpoint, AuditCosignature, AuditEvent, AuditTreeNode
from agentbank.db.models.battery import BatteryAnswer, BatteryWave
from agentbank.db.models.builds import BuildFailure
from agentbank.db.models.endpoints import CallLimit, ModelBatch
from agentbank.db.models.evaluations import ReportCard
from agentbank.db.models.groups import FocusGroup, FocusGroupSeat, FocusGroupUtterance
from agentbank.db.models.instruments import InstrumentRecord, ItemRecord, TeamInstrument
from agentbank.db.models.interviews import AudioChunk, InterviewInvitation, InterviewSession
from agentbank.db.models.jobs import Job, JobEstimate, JobResult, PopulationAnswer
from agentbank.db.models.participants import Participant
from agentbank.db.models.protection import OutboxEvent, WithheldAnswer
from agentbank.db.models.releases import OpenRead, Release, ReleaseTable, ReleaseValidity, TableRequest
from agentbank.db.models.studies import Study
from agentbank.db.models.transcripts import Transcript, Turn

__all__ = [
    "AccessToken",
    "Agent",
    "AnswerRecord",
    "AudioChunk",
    "AuditCheckpoint",
    "AuditCosignature",
    "AuditEvent",
    "AuditTreeNode",
    "Base",
    "BatteryAnswer",
    "BatteryWave",
    "BuildFailure",
    "CallLimit",
    "Client",
    "FocusGroup",
    "FocusGroupSeat",
    "FocusGroupUtterance",
    "InstrumentRecord",
    "InterviewInvitation",
    "InterviewSession",
    "ItemRecord",
    "Job",
    "JobEstimate",
    "JobResult",
    "Memory",
    "ModelBatch",
    "OpenRead",
    "OutboxEvent",
    "Participant",
    "Person",
    "PopulationAnswer",
    "Project",
    "ProjectApproval",
    "ProjectMember",
    "Release",
    "ReleaseTable",
    "ReleaseValidity",
    "ReportCard",
    "Study",
    "TableRequest",
    "TeamInstrument",
    "Transcript",
    "Turn",
    "WithheldAnswer",
]
