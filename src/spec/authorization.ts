/** Authorization: role assignment schedules and schedule instances. */
import { z } from 'zod';
import { apiVersionQuery, resourceEnvelope } from './common';

export const scheduleStatus = z.enum([
  'Accepted',
  'PendingEvaluation',
  'Granted',
  'Denied',
  'PendingProvisioning',
  'Provisioned',
  'PendingRevocation',
  'Revoked',
  'Canceled',
  'Failed',
  'PendingApprovalProvisioning',
  'PendingApproval',
  'FailedAsResourceIsLocked',
  'PendingAdminDecision',
  'AdminApproved',
  'AdminDenied',
  'TimedOut',
  'ProvisioningStarted',
  'Invalid',
  'PendingScheduleCreation',
  'ScheduleCreated',
  'PendingExternalProvisioning',
]);

const namedRef = z.looseObject({ id: z.string().optional(), displayName: z.string().optional(), type: z.string().optional() });

export const expandedProperties = z.looseObject({
  principal: namedRef.extend({ email: z.string().optional() }).optional(),
  roleDefinition: namedRef.optional(),
  scope: namedRef.optional(),
});

const scheduleCommon = {
  assignmentType: z.enum(['Activated', 'Assigned']).optional(),
  condition: z.string().optional(),
  conditionVersion: z.string().optional(),
  createdOn: z.string().optional(),
  startDateTime: z.string().optional(),
  endDateTime: z.string().optional(),
  expandedProperties: expandedProperties.optional(),
  linkedRoleEligibilityScheduleId: z.string().optional(),
  memberType: z.enum(['Inherited', 'Direct', 'Group']).optional(),
  principalId: z.string().optional(),
  principalType: z.enum(['User', 'Group', 'ServicePrincipal', 'ForeignGroup', 'Device']).optional(),
  roleDefinitionId: z.string().optional(),
  scope: z.string().optional(),
  status: scheduleStatus.optional(),
};

export const roleAssignmentScheduleInstance = z.looseObject({
  ...resourceEnvelope,
  properties: z
    .looseObject({
      ...scheduleCommon,
      linkedRoleEligibilityScheduleInstanceId: z.string().optional(),
      originRoleAssignmentId: z.string().optional(),
      roleAssignmentScheduleId: z.string().optional(),
    })
    .optional(),
});

export const roleAssignmentSchedule = z.looseObject({
  ...resourceEnvelope,
  properties: z
    .looseObject({
      ...scheduleCommon,
      updatedOn: z.string().optional(),
      roleAssignmentScheduleRequestId: z.string().optional(),
    })
    .optional(),
});

/**
 * The four documented `$filter` forms of both schedule lists. `principalId eq` takes the id
 * quoted, as ARM filters are written, or bare, as the spec writes it.
 */
export const scheduleFilter = z
  .string()
  .regex(
    /^\s*(atScope\(\)|asTarget\(\)|principalId\s+eq\s+('[^'\s]+'|[^'\s()]+)|assignedTo\('[^'\s]+'\))\s*$/,
    "$filter must be one of: atScope(), principalId eq '{id}', assignedTo('{userId}'), asTarget()",
  );

/** The query of the two schedule lists: the api-version and an optional documented $filter. */
export const scheduleQuery = z.looseObject({ 'api-version': apiVersionQuery, $filter: scheduleFilter.optional() });

/**
 * `{scope}`: one or more path segments such as `subscriptions/{id}/resourceGroups/{rg}` or
 * `providers/{P}.Management/managementGroups/{id}`. Segments must be non-empty and not `.`/`..`.
 */
export const scopeParam = z
  .string()
  .min(1, 'scope is required')
  .refine(
    (scope) => scope.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    'scope must be a resource path with no empty, "." or ".." segments',
  );
