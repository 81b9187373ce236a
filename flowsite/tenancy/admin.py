"""Admin pages for tenants, their members and groups, and their global policies. What a tenant
is granted on the shared nodes is shown to every admin-site user and changed only by platform
operators, through ``do_change_tenant_grants``."""

from django import forms
from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

from flowsite.tenancy.actions import GRANT_FIELDS, do_change_tenant_grants
from flowsite.tenancy.grants import GrantError, Grants
from flowsite.tenancy.models import (
    Membership,
    Tenant,
    TenantGroup,
    TenantGroupPermission,
    TenantUserPermission,
    is_platform_operator,
)

#: The form field that shows a GrantError's field.
_FORM_FIELDS = {"capabilities": "capabilities", "file_roots": "file_roots", "network_allow": "network_allow",
                "listen_ports": "listen_port_low", "pool": "pool"}


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class _GlobalPolicyInline(admin.TabularInline):
    extra = 0
    verbose_name = "global policy"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "permission":
            kwargs["queryset"] = Permission.objects.filter(content_type=ContentType.objects.get_for_model(Tenant))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class UserPolicyInline(_GlobalPolicyInline):
    model = TenantUserPermission
    autocomplete_fields = ["user"]
    verbose_name_plural = "global policies held by users"


class GroupPolicyInline(_GlobalPolicyInline):
    model = TenantGroupPermission
    verbose_name_plural = "global policies held by groups"


class TenantForm(forms.ModelForm):
    """A tenant; its grants, when the form has them, are checked as the action checks them."""

    class Meta:
        model = Tenant
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        if all(name in self.fields for name in GRANT_FIELDS):  # an operator's form
            grants = Grants(**{name: cleaned.get(name, getattr(self.instance, name)) for name in GRANT_FIELDS})
            try:
                grants.checked()
            except GrantError as error:
                self.add_error(_FORM_FIELDS[error.field], error.message)
        return cleaned


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantForm
    list_display = ["name", "slug", "pool", "capabilities", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, UserPolicyInline, GroupPolicyInline]
    fieldsets = [(None, {"fields": ["name", "slug"]}),
                 ("Granted by platform operators", {"fields": list(GRANT_FIELDS)})]

    def has_module_permission(self, request):
        return is_platform_operator(request.user) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return is_platform_operator(request.user) or super().has_view_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return is_platform_operator(request.user) or super().has_change_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        return [] if is_platform_operator(request.user) else list(GRANT_FIELDS)

    def save_model(self, request, obj, form, change):
        wanted = Grants.of(obj)
        stored = Grants.of(Tenant.objects.get(pk=obj.pk)) if change else Grants()
        for name in GRANT_FIELDS:  # grants change through the action (checked, audited), the rest as usual
            setattr(obj, name, getattr(stored, name))
        super().save_model(request, obj, form, change)
        if is_platform_operator(request.user):
            do_change_tenant_grants(obj, wanted, acting_user=request.user)


@admin.register(TenantGroup)
class TenantGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant"]
    list_filter = ["tenant"]
    search_fields = ["name"]
    readonly_fields = ["group"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.group = Group.objects.create(name=f"{obj.tenant.slug}/{obj.name}")
        else:
            obj.group.name = f"{obj.tenant.slug}/{obj.name}"
            obj.group.save(update_fields=["name"])
        super().save_model(request, obj, form, change)
