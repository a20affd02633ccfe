/** Service health: events. */
import { z } from 'zod';
import { resourceEnvelope } from './common';

const displayText = z.looseObject({ value: z.string().optional(), localizedValue: z.string().optional() });

const update = z.looseObject({
  summary: z.string().optional(),
  updateDateTime: z.string().optional(),
  eventTags: z.array(z.string()).optional(),
});

const impactedServiceRegion = z.looseObject({
  impactedRegion: z.string().optional(),
  impactedSubscriptions: z.array(z.string()).optional(),
  impactedTenants: z.array(z.string()).optional(),
  lastUpdateTime: z.string().optional(),
  status: z.enum(['Active', 'Resolved']).optional(),
  updates: z.array(update).optional(),
});

export const serviceHealthEvent = z.looseObject({
  ...resourceEnvelope,
  location: z.string().optional(),
  properties: z
    .looseObject({
      additionalInformation: z.looseObject({ message: z.string().optional() }).optional(),
      article: z
        .looseObject({ articleContent: z.string().optional(), articleId: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() })
        .optional(),
      billingId: z.string().optional(),
      currencyType: z.string().optional(),
      description: z.string().optional(),
      duration: z.number().int().optional(),
      enableChatWithUs: z.boolean().optional(),
      enableMicrosoftSupport: z.boolean().optional(),
      eventLevel: z.enum(['Critical', 'Error', 'Warning', 'Informational']).optional(),
      eventSource: z.enum(['ResourceHealth', 'ServiceHealth']).optional(),
      eventSubType: z
        .enum([
          'Retirement',
          'ForeignExchangeRateChange',
          'Underbilling',
          'Overbilling',
          'PriceChanges',
          'TaxChanges',
          'MeterIDChanges',
          'UnauthorizedPartyAbuse',
        ])
        .optional(),
      eventTags: z.array(z.string()).optional(),
      eventType: z.enum(['ServiceIssue', 'PlannedMaintenance', 'HealthAdvisory', 'RCA', 'EmergingIssues', 'SecurityAdvisory', 'Billing']).optional(),
      externalIncidentId: z.string().optional(),
      faqs: z.array(z.looseObject({ question: z.string().optional(), answer: z.string().optional(), localeCode: z.string().optional() })).optional(),
      header: z.string().optional(),
      hirStage: z.string().optional(),
      impact: z
        .array(
          z.looseObject({
            impactedService: z.string().optional(),
            impactedServiceGuid: z.string().optional(),
            impactedRegions: z.array(impactedServiceRegion).optional(),
          }),
        )
        .optional(),
      impactMitigationTime: z.string().optional(),
      impactStartTime: z.string().optional(),
      impactType: z.string().optional(),
      isEventSensitive: z.boolean().optional(),
      isHIR: z.boolean().optional(),
      lastUpdateTime: z.string().optional(),
      level: z.enum(['Critical', 'Warning']).optional(),
      links: z
        .array(
          z.looseObject({
            type: z.enum(['Button', 'Hyperlink']).optional(),
            bladeName: z.string().optional(),
            extensionName: z.string().optional(),
            displayText: displayText.optional(),
            parameters: z.record(z.string(), z.unknown()).optional(),
          }),
        )
        .optional(),
      newRate: z.number().optional(),
      oldRate: z.number().optional(),
      platformInitiated: z.boolean().optional(),
      priority: z.number().int().min(0).max(23).optional(),
      reason: z.string().optional(),
      recommendedActions: z
        .looseObject({
          message: z.string().optional(),
          localeCode: z.string().optional(),
          actions: z.array(z.looseObject({ actionText: z.string().optional(), groupId: z.number().int().optional() })).optional(),
        })
        .optional(),
      status: z.enum(['Active', 'Resolved']).optional(),
      summary: z.string().optional(),
      title: z.string().optional(),
    })
    .optional(),
});

/** ErrorResponse of the service-health event details: { code, message, details } at the top level. */
export const resourceHealthErrorResponse = z.looseObject({
  code: z.string().optional(),
  message: z.string().optional(),
  details: z.string().optional(),
});
