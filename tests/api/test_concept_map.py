"""The concept map through the real server (SPEC R3, R4): the three-chapter biology course in,
with the built-in offline extractor; merged nodes, provenance, readiness, teaching order, the
block's map section, teaching by telling, file versions, and bad files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from pypdf import PdfWriter

from tests.fixtures.biology.make_pdf import FIXTURE_DIR, build_pdf, transport_chapter
from tests.helpers.harness import A, Harness
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.files.versions import fingerprint
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"
T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
EXPECTED = json.loads((FIXTURE_DIR / "EXPECTED.json").read_text(encoding="utf-8"))
TEACHING = EXPECTED["teaching"]["sentence"]


def at(when: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(when)
    return ts


def course_files() -> list[tuple[str, str, bytes]]:
    title, pages = transport_chapter()
    return [
        ("cells.md", "text/markdown", (FIXTURE_DIR / "cells.md").read_bytes()),
        ("organelles.txt", "text/plain", (FIXTURE_DIR / "organelles.txt").read_bytes()),
        ("transport.pdf", "application/pdf", build_pdf(pages, title)),
    ]


async def ingest(
    h: Harness, name: str, media: str, content: bytes, when: datetime = T0
) -> pb.IngestFileReply:
    reply: pb.IngestFileReply = await h.stub.IngestFile(
        pb.IngestFileRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            file_id=name,
            filename=name,
            media_type=media,
            content=content,
            occurred_at=at(when),
        ),
        metadata=A,
    )
    return reply


async def give_course(h: Harness) -> list[pb.IngestFileReply]:
    return [
        await ingest(h, name, media, content, T0 + timedelta(hours=i))
        for i, (name, media, content) in enumerate(course_files())
    ]


async def get_map(h: Harness) -> pb.GetMapReply:
    reply: pb.GetMapReply = await h.stub.GetMap(
        pb.GetMapRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    return reply


async def block(h: Harness, query: str, budget: int = 1200) -> pb.BuildBlockReply:
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            query=query,
            budget_tokens=budget,
            now=at(T0 + timedelta(days=1)),
        ),
        metadata=A,
    )
    return reply


def by_key(reply: pb.GetMapReply) -> dict[str, pb.ConceptNode]:
    return {canonical_key(n.name): n for n in reply.nodes}


async def test_the_course_becomes_one_map_with_merged_nodes_and_provenance(
    harness: Harness,
) -> None:
    replies = await give_course(harness)
    assert [r.pages for r in replies] == [
        EXPECTED["files"][name]["pages"] for name, _, _ in course_files()
    ]
    assert all(r.extractor == "builtin" and r.version == 1 for r in replies)
    rejected = {canonical_key(r.name) for reply in replies for r in reply.rejected}
    nodes = by_key(await get_map(harness))
    for heading in ("Introduction", "Common mistakes", "Summary", "Glossary"):
        assert canonical_key(heading) not in nodes

    expected = {canonical_key(c["name"]): c for c in EXPECTED["concepts"]}
    missing = set(expected) - set(nodes)
    assert not missing, f"concepts the extractor missed: {missing}; rejected: {rejected}"
    for key, concept in expected.items():
        files = {p.file_id for p in nodes[key].provenance}
        assert files == set(concept["explained_in"]), (concept["name"], files)
        assert nodes[key].readiness == pytest.approx(0.60)
        assert nodes[key].band == pb.READINESS_BAND_EXPLAINED

    gradient = nodes[canonical_key("Concentration Gradient")]
    assert gradient.readiness == pytest.approx(0.35)
    assert canonical_key("Glucose") not in nodes
    assert any(
        canonical_key(a) == canonical_key("Glucose")
        for a in nodes[canonical_key("Mitochondria")].assumed
    )


async def test_teaching_order_puts_prerequisites_first(harness: Harness) -> None:
    await give_course(harness)
    reply = await get_map(harness)
    order = [canonical_key(n) for n in reply.teaching_order]
    edges = {(canonical_key(e.prerequisite), canonical_key(e.concept)) for e in reply.edges}
    for edge in EXPECTED["edges"]:
        pair = (canonical_key(edge["prerequisite"]), canonical_key(edge["concept"]))
        assert pair in edges, edge
        assert order.index(pair[0]) < order.index(pair[1]), edge
    assert not reply.cycles
    assert 0.35 <= reply.subject_readiness <= 0.60


async def test_an_ordinary_question_shows_the_map_first_with_the_honest_header(
    harness: Harness,
) -> None:
    await give_course(harness)
    reply = await block(harness, "what should I review before osmosis?")
    first = reply.sections[0]
    assert first.title.startswith("SUBJECT MAP (")
    assert first.title.endswith("this is about the material, NOT the student's mastery)")
    shown = [canonical_key(c) for c in first.concepts]
    assert shown[0] == canonical_key("Osmosis")
    for name in ("Diffusion", "Cell Membrane"):
        assert canonical_key(name) in shown[1:4]
    assert reply.tokens_used <= 1200


async def test_a_record_question_puts_the_map_last(harness: Harness) -> None:
    await give_course(harness)
    reply = await block(harness, "what did I get wrong so far?")
    titles = [s.title for s in reply.sections]
    assert titles[0] == "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD"
    map_at = next(i for i, t in enumerate(titles) if t.startswith("SUBJECT MAP"))
    assert map_at == len(titles) - 2  # then only "how to use this"


async def test_telling_the_map_attaches_a_note_raises_readiness_and_writes_a_taught_episode(
    harness: Harness,
) -> None:
    await give_course(harness)
    reply = await harness.stub.Teach(
        pb.TeachRequest(student_id=STUDENT, subject_id=SUBJECT, text=TEACHING), metadata=A
    )
    assert canonical_key(reply.concept) == canonical_key("Mitochondria")
    assert not reply.created
    assert reply.episode.kind == pb.EPISODE_KIND_TAUGHT
    node = by_key(await get_map(harness))[canonical_key("Mitochondria")]
    assert node.readiness == pytest.approx(1.0)
    assert any("powerhouse of the cell" in note for note in node.taught)
    shown = await block(harness, "tell me about mitochondria")
    map_section = shown.sections[0]
    line = map_section.lines[list(map_section.concepts).index(node.name)]
    assert "[taught: " in line
    assert "powerhouse" in line


async def test_teaching_a_concept_the_map_lacks_makes_a_short_named_node(
    harness: Harness,
) -> None:
    await give_course(harness)
    reply = await harness.stub.Teach(
        pb.TeachRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            text="Remember that in our class we call the Golgi apparatus the post office",
        ),
        metadata=A,
    )
    assert reply.created
    assert 1 <= len(reply.concept.split()) <= 4
    node = by_key(await get_map(harness))[canonical_key(reply.concept)]
    assert node.band == pb.READINESS_BAND_TAUGHT


async def test_a_question_never_teaches(harness: Harness) -> None:
    await give_course(harness)
    asked = "Do you remember that we call the mitochondria the powerhouse of the cell?"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.Teach(
            pb.TeachRequest(student_id=STUDENT, subject_id=SUBJECT, text=asked), metadata=A
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    await harness.append(
        pb.NewEpisode(
            student_id=STUDENT,
            subject_id=SUBJECT,
            kind=pb.EPISODE_KIND_QUESTION,
            summary=asked,
            text=asked,
        )
    )
    kinds = [e.kind for e in await harness.list_all()]
    assert pb.EPISODE_KIND_TAUGHT not in kinds


async def say(harness: Harness, said: str) -> None:
    """The student's message, appended as the chat service does."""
    await harness.append(
        pb.NewEpisode(
            student_id=STUDENT,
            subject_id=SUBJECT,
            kind=pb.EPISODE_KIND_QUESTION,
            summary=said,
            text=said,
        )
    )


async def test_a_student_message_that_teaches_writes_a_taught_episode(harness: Harness) -> None:
    await give_course(harness)
    said = "Ricorda che nella nostra classe chiamiamo i mitocondri la centrale della cellula"
    await say(harness, said)
    taught = [e for e in await harness.list_all() if e.kind == pb.EPISODE_KIND_TAUGHT]
    assert len(taught) == 1
    assert taught[0].text == said


async def test_standing_requests_are_taught_notes_on_one_concept_of_how_the_student_learns(
    harness: Harness,
) -> None:
    await give_course(harness)
    await say(harness, "please always put the units next to every number")
    await say(harness, "I learn best when you start from an example")
    taught = [e for e in await harness.list_all() if e.kind == pb.EPISODE_KIND_TAUGHT]
    assert [list(e.concepts) for e in taught] == [["how I learn best"], ["how I learn best"]]
    node = by_key(await get_map(harness))[canonical_key("how I learn best")]
    assert node.band == pb.READINESS_BAND_TAUGHT
    assert len(node.taught) == 2
    # A concept taught in so many words comes early in the teaching order, so the map shows the
    # requests beside whatever the student asks.
    map_section = (await block(harness, "what is osmosis?")).sections[0]
    line = map_section.lines[list(map_section.concepts).index(node.name)]
    assert "always put the units next to every number" in line
    assert "I learn best when you start from an example" in line


async def test_the_same_bytes_again_are_a_no_op_and_new_bytes_a_new_version(
    harness: Harness,
) -> None:
    name, media, content = course_files()[0]
    first = await ingest(harness, name, media, content)
    before = len(await harness.list_all())
    same = await ingest(harness, name, media, content)
    assert same.unchanged
    assert same.version == 1
    assert same.fingerprint == first.fingerprint
    assert len(await harness.list_all()) == before
    edited = content + b"\n## Vacuoles\n\nA **Vacuole** is a sac that stores water in the cell.\n"
    second = await ingest(harness, name, media, edited)
    assert (second.version, second.unchanged) == (2, False)
    assert second.fingerprint == fingerprint(edited)
    store = harness.app.services.store
    from tutor_memory.domain.episodes import ChainKey

    versions = store.file_versions(
        ChainKey("tenant-a", STUDENT, SUBJECT), harness.app.services.embedder.dim,
        current_only=False,
    )  # fmt: skip
    assert [(v.version, v.fingerprint) for v in versions] == [
        (1, first.fingerprint),
        (2, second.fingerprint),
    ]


async def test_passages_are_searchable_with_their_pages(harness: Harness) -> None:
    await give_course(harness)
    reply = await harness.stub.SearchPassages(
        pb.SearchPassagesRequest(
            student_id=STUDENT, subject_id=SUBJECT, query="how does active transport use energy?"
        ),
        metadata=A,
    )
    assert reply.passages
    best = reply.passages[0]
    assert best.ref.file_id == "transport.pdf"
    assert best.ref.page in EXPECTED["concepts"][-1]["explained_in"]["transport.pdf"]


def encrypted_pdf() -> bytes:
    title, pages = transport_chapter()
    plain = build_pdf(pages, title)
    from io import BytesIO

    from pypdf import PdfReader

    writer = PdfWriter(clone_from=PdfReader(BytesIO(plain)))
    writer.encrypt(user_password="", owner_password="owner")
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "media", "content", "reason"),
    [
        ("empty.md", "text/markdown", b"", "empty"),
        ("broken.pdf", "application/pdf", b"%PDF-1.7\n1 0 obj <<", "PDF"),
        ("locked.pdf", "application/pdf", None, "encrypted"),
        ("latin1.txt", "text/plain", "caf\u00e9".encode("latin-1"), "UTF-8"),
        ("notes.docx", "", b"PK\x03\x04 binary", "format"),
    ],
)
async def test_bad_files_are_invalid_argument_and_store_nothing(
    harness: Harness, name: str, media: str, content: bytes | None, reason: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await ingest(harness, name, media, encrypted_pdf() if content is None else content)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason.lower() in (err.value.details() or "").lower()
    assert await harness.list_all() == []
    assert (await get_map(harness)).nodes == []


async def test_caller_supplied_concepts_are_validated_and_merged_like_the_builtin_ones(
    harness: Harness,
) -> None:
    await give_course(harness)
    reply = await harness.stub.IngestFile(
        pb.IngestFileRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            file_id="notes.md",
            filename="notes.md",
            content=b"# Notes\n\nOsmosis again, and an introduction.\n",
            concepts=[
                pb.ConceptInput(name="Introduction", summary="What this is about.", pages=[1]),
                pb.ConceptInput(name="osmosis", summary="Water crossing a membrane.", pages=[1]),
            ],
        ),
        metadata=A,
    )
    assert reply.extractor == "caller"
    assert [r.name for r in reply.rejected] == ["Introduction"]
    node = by_key(await get_map(harness))[canonical_key("Osmosis")]
    assert "notes.md" in {p.file_id for p in node.provenance}

    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.IngestFile(
            pb.IngestFileRequest(
                student_id=STUDENT,
                subject_id=SUBJECT,
                file_id="bad.md",
                filename="bad.md",
                content=b"# One page\n\ntext\n",
                concepts=[pb.ConceptInput(name="Osmosis", pages=[7])],
            ),
            metadata=A,
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "concepts[0].pages[0]" in (err.value.details() or "")


async def test_a_removed_file_leaves_the_map(harness: Harness) -> None:
    await give_course(harness)
    reply = await harness.stub.RemoveFile(
        pb.RemoveFileRequest(student_id=STUDENT, subject_id=SUBJECT, file_id="organelles.txt"),
        metadata=A,
    )
    assert reply.episode.kind == pb.EPISODE_KIND_FILE
    nodes = by_key(await get_map(harness))
    assert canonical_key("Endosymbiosis") not in nodes
    assert "organelles.txt" not in {p.file_id for n in nodes.values() for p in n.provenance}


async def test_an_oversized_file_is_invalid_argument_naming_the_limit(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tutor_memory.domain.files import read

    monkeypatch.setattr(read, "MAX_FILE_BYTES", 1_000)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await ingest(harness, "big.txt", "text/plain", b"Osmosis is water moving. " * 100)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "1000" in (err.value.details() or "").replace(",", "")
    assert await harness.list_all() == []
