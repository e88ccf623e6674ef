"""The Pipecat side of ``bench/pipecat_side_by_side.py``: a Pipecat 1.14 voice bot with our models, offline.

Runs in its own virtual environment (``.venv-pipecat``, made from ``bench/pipecat/requirements.txt``), never in
the project's; it imports nothing of the project. ``bench/pipecat_side_by_side.py`` starts it, waits for the
line ``READY`` on stdout, drives one caller session over its WebSocket and stops it::

    .venv-pipecat/bin/python bench/pipecat/bot.py --port 8766 \\
        --whisper-model DIR --piper-voice FILE.onnx --llm-base-url http://127.0.0.1:PORT/v1

The pipeline is Pipecat's recommended local cascade, every stage at Pipecat's defaults unless said here:

    transport input (SingleClientWebsocketServerTransport, ProtobufFrameSerializer, 16 kHz in)
    -> WhisperSTTService (faster-whisper; ``--whisper-model``: our bundled tiny.en directory, cpu, int8)
    -> user context aggregator (SileroVADAnalyzer with Pipecat's default VADParams; the default user turn
       strategies, whose stop strategy is LocalSmartTurnAnalyzerV3 with its default params and bundled model)
    -> OpenAILLMService (``--llm-base-url``: the OpenAI-compatible emulator the bench runs on loopback)
    -> PiperTTSService (``--piper-voice``: our bundled joe voice file; loaded from its folder, so nothing is
       downloaded)
    -> transport output (24 kHz, Pipecat's 40 ms chunks, paced by the transport)
    -> assistant context aggregator

Silero and Smart Turn v3 are the ONNX models inside the pipecat-ai wheel. The bot serves one caller; when the
caller disconnects the bot exits. Pipecat's own log goes to stderr (``--log-level``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

SYSTEM_PROMPT = "You are a helpful, concise voice assistant. Answer in one or two short sentences."


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bot.py", description="Pipecat 1.14 voice bot over a WebSocket, local models, for the side-by-side bench."
    )
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8766, help="listen port (default: 8766)")
    parser.add_argument("--whisper-model", required=True, help="faster-whisper model directory (CTranslate2)")
    parser.add_argument("--piper-voice", required=True, help="Piper voice .onnx file (its .onnx.json beside it)")
    parser.add_argument("--llm-base-url", required=True, help="OpenAI-compatible API root, ending in /v1")
    parser.add_argument("--llm-model", default="emulated-llm", help="model name sent to the LLM server")
    parser.add_argument("--log-level", default="WARNING", help="Pipecat's log level on stderr (default: WARNING)")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> None:
    from loguru import logger
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.serializers.protobuf import ProtobufFrameSerializer
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.services.piper.tts import PiperTTSService
    from pipecat.services.whisper.stt import WhisperSTTService
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )
    from pipecat.workers.runner import WorkerRunner

    logger.remove()
    logger.add(sys.stderr, level=args.log_level.upper())

    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            serializer=ProtobufFrameSerializer(),
        ),
        host=args.host,
        port=args.port,
    )
    stt = WhisperSTTService(
        device="cpu",
        compute_type="int8",
        settings=WhisperSTTService.Settings(model=args.whisper_model),
    )
    llm = OpenAILLMService(
        api_key="not-needed",
        base_url=args.llm_base_url,
        settings=OpenAILLMService.Settings(model=args.llm_model, system_instruction=SYSTEM_PROMPT),
    )
    voice = Path(args.piper_voice)
    # PiperTTSService looks for <download_dir>/<voice>.onnx and downloads only when it is missing.
    tts = PiperTTSService(download_dir=voice.parent, settings=PiperTTSService.Settings(voice=voice.stem))

    context = LLMContext()
    aggregators = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    pipeline = Pipeline(
        [transport.input(), stt, aggregators.user(), llm, tts, transport.output(), aggregators.assistant()]
    )
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=24000),
        idle_timeout_secs=None,
    )

    @transport.event_handler("on_websocket_ready")
    async def on_ready(_transport: object) -> None:
        print("READY", flush=True)

    @transport.event_handler("on_client_disconnected")
    async def on_disconnected(_transport: object, _websocket: object) -> None:
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=True)
    await runner.add_workers(worker)
    await runner.run()


def main() -> int:
    asyncio.run(run(parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
