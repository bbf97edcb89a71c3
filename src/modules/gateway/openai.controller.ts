import { applyDecorators, Body, Controller, Get, HttpCode, Logger, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { Billable } from './accounts/gateway-rate-limit.guard.js';
import { ChatService } from './chat/chat.service.js';
import type { GatewayCaller } from './gateway-caller.js';
import type { ChatCompletionChunk } from './chat/chat-response.js';
import { ApiFileResponse } from '../../common/openapi.js';
import { BodyLimit } from '../../common/request-body.js';
import { GATEWAY_BODY_LIMIT } from './gateway-body-limits.js';
import { AudioService } from './audio.service.js';
import { EmbeddingsService } from './embeddings.service.js';
import {
  ChatCompletionDto,
  ChatCompletionRequestDto,
  EmbeddingsDto,
  EmbeddingsRequestDto,
  ModelDto,
  ModelListDto,
  OpenAiErrorDto,
  SpeechRequestDto,
  TranscriptionDto,
  TranscriptionRequestDto,
} from './gateway.dto.js';
import type { RoutingDecision } from './model-routing.js';
import { ModelsService } from './models.service.js';
import { writeSse } from './stream-writers.js';

/** Says which model answered when a configured fallback stood in for the requested one. */
export const ROUTED_FROM_HEADER = 'x-gateway-routed-from';

const ERROR_CAUSES: Record<number, string> = {
  400: 'Invalid parameter, or the model cannot take the content and no fallback is configured',
  401: 'Missing or wrong API key',
  402: 'The PAYG balance is used up (insufficient_quota; SDKs do not retry it)',
  429: "Over the per-minute request limit of the caller's tier (retry-after says when)",
  404: 'The model is not installed',
  413: 'The body is over the route\'s cap (docs/gateway.md, "Body limits"); decided before the body is read',
  502: 'The model runtime (or speech backend) answered with an error (HTTP 5xx) or a body that is not its JSON',
  503: 'The model runtime cannot be reached',
};

/** OpenAI's error body for the statuses every route of the API may answer. */
const OpenAiErrors = (...statuses: number[]) =>
  applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, type: OpenAiErrorDto, description: ERROR_CAUSES[status] })),
  );

function markRouting(response: Response, routing: RoutingDecision): void {
  if (routing.routedFrom) response.setHeader(ROUTED_FROM_HEADER, routing.routedFrom);
}

/** The OpenAI-compatible API under /v1, over Ollama's native API. */
@ApiTags('openai')
@ApiBearerAuth()
@ApiExtraModels(ChatCompletionDto, TranscriptionDto)
@OpenAiErrors(400, 401, 402, 404, 413, 429, 502, 503)
@Authenticated()
@Controller('v1')
export class OpenAiController {
  private readonly logger = new Logger('Gateway');

  constructor(
    private readonly chat: ChatService,
    private readonly embeddings: EmbeddingsService,
    private readonly models: ModelsService,
    private readonly audio: AudioService,
  ) {}

  @Post('chat/completions')
  @BodyLimit(GATEWAY_BODY_LIMIT.chat)
  @Billable()
  @HttpCode(200)
  @ApiOperation({ summary: 'Chat completion; `stream: true` answers with server-sent chat.completion.chunk events' })
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiResponse({
    status: 200,
    description: 'The completion, or (stream) `data: <chunk>` events ending with `data: [DONE]`',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ChatCompletionDto) } },
      'text/event-stream': { schema: { type: 'string' } },
    },
  })
  async completions(
    @CurrentCaller() caller: GatewayCaller,
    @Body() body: unknown,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const abort = abortOnClose(request, response);
    if (!isStreamRequest(body)) {
      const result = await this.chat.complete(caller, body, abort.signal);
      markRouting(response, result.routing);
      // Written directly, without the content-type negotiation and charset handling of Express's json()/send().
      const json = JSON.stringify(result.completion);
      response.status(200);
      response.setHeader('content-type', 'application/json; charset=utf-8');
      response.setHeader('content-length', Buffer.byteLength(json));
      response.end(json);
      return;
    }
    const stream = await this.chat.startStream(caller, body, abort.signal);
    markRouting(response, stream.routing);
    await writeSse<ChatCompletionChunk>(response, stream.chunks, {
      onError: (error) => this.logger.warn(`stream ${stream.translator.id} failed: ${(error as Error).message}`),
    });
  }

  @Post('embeddings')
  @BodyLimit(GATEWAY_BODY_LIMIT.embeddings)
  @Billable()
  @HttpCode(200)
  @ApiOperation({ summary: 'Embeddings of a string or an array of strings' })
  @ApiBody({ type: EmbeddingsRequestDto })
  @ApiOkResponse({ type: EmbeddingsDto })
  async createEmbeddings(
    @CurrentCaller() caller: GatewayCaller,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<EmbeddingsDto> {
    const { result, routing } = await this.embeddings.create(caller, body);
    markRouting(response, routing);
    return result;
  }

  @Post('audio/speech')
  @Billable()
  @HttpCode(200)
  @ApiOperation({ summary: 'Text to speech through the configured TTS backend (TTS_URL); 501 without one' })
  @ApiBody({ type: SpeechRequestDto })
  @ApiFileResponse(
    'The audio, in the requested format',
    'audio/mpeg',
    'audio/ogg',
    'audio/aac',
    'audio/flac',
    'audio/wav',
    'audio/pcm',
  )
  @ApiResponse({ status: 501, type: OpenAiErrorDto, description: 'No TTS backend configured' })
  async speech(
    @CurrentCaller() caller: GatewayCaller,
    @Body() body: unknown,
    @Res() response: Response,
  ): Promise<void> {
    const answer = await this.audio.speech(caller, body);
    response.status(200).type(answer.contentType).send(answer.body);
  }

  @Post('audio/transcriptions')
  @BodyLimit(GATEWAY_BODY_LIMIT.transcription, { streamed: true })
  @Billable()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Speech to text through the configured STT backend (STT_URL), multipart, up to 25 MB; 501 without one',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: TranscriptionRequestDto })
  @ApiResponse({
    status: 200,
    description: '`{text}` (json), more fields (verbose_json), or plain text (text, srt, vtt)',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(TranscriptionDto) } },
      'text/plain': { schema: { type: 'string' } },
    },
  })
  @ApiResponse({ status: 501, type: OpenAiErrorDto, description: 'No STT backend configured' })
  async transcriptions(
    @CurrentCaller() caller: GatewayCaller,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const answer = await this.audio.transcription(caller, request);
    response
      .status(200)
      .type(answer.contentType || 'application/json')
      .send(answer.body);
  }

  @Get('models')
  @ApiOperation({ summary: 'The models installed in the runtime, with their types' })
  @ApiOkResponse({ type: ModelListDto })
  listModels(): Promise<ModelListDto> {
    return this.models.list();
  }

  @Get('models/*id')
  @ApiOperation({ summary: 'One installed model (names may contain "/" and ":")' })
  @ApiOkResponse({ type: ModelDto })
  getModel(@Param('id') id: string | string[]): Promise<ModelDto> {
    return this.models.get(Array.isArray(id) ? id.join('/') : id);
  }
}

/** Aborts the upstream call when the client goes away before the answer is complete. */
function abortOnClose(request: Request, response: Response): AbortController {
  const controller = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  request.on('aborted', () => controller.abort());
  return controller;
}

function isStreamRequest(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
}
