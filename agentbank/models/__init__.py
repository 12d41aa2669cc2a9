"""ORM models, one module per family of tables. Importing this package registers them all."""

from agentbank.db.base import Base
from agentbank.models.access import AccessToken, Client, Person, Project, ProjectApproval, ProjectMember
from agentbank.models.agents import Agent, Memory
from agentbank.models.answers import AnswerRecord
from agentbank.models.audit import AuditCheckpoint, AuditEvent
from agentbank.models.battery import BatteryAnswer, BatteryWave
from agentbank.models.builds import BuildFailure
from agentbank.models.endpoints import CallLimit, ModelBatch
from agentbank.models.evaluations import ItemValidity, ReportCard
from agentbank.models.instruments import InstrumentRecord, ItemRecord
from agentbank.models.interviews import AudioChunk, InterviewInvitation, InterviewSession
from agentbank.models.jobs import Job, JobResult, PopulationAnswer
from agentbank.models.participants import Participant
from agentbank.models.protection import OutboxEvent, WithheldAnswer
from agentbank.models.releases import Release, ReleaseCount, ReleaseMember, ReleaseTable
from agentbank.models.transcripts import Transcript, Turn

__all__ = [
    "AccessToken",
    "Agent",
    "AnswerRecord",
    "AudioChunk",
    "AuditCheckpoint",
    "AuditEvent",
    "Base",
    "BatteryAnswer",
    "BatteryWave",
    "BuildFailure",
    "CallLimit",
    "Client",
    "InstrumentRecord",
    "InterviewInvitation",
    "InterviewSession",
    "ItemRecord",
    "ItemValidity",
    "Job",
    "JobResult",
    "Memory",
    "ModelBatch",
    "OutboxEvent",
    "Participant",
    "Person",
    "PopulationAnswer",
    "Project",
    "ProjectApproval",
    "ProjectMember",
    "Release",
    "ReleaseCount",
    "ReleaseMember",
    "ReleaseTable",
    "ReportCard",
    "Transcript",
    "Turn",
    "WithheldAnswer",
]
